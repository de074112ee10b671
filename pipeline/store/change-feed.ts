// The change feed (public topic crawl.changes): the record of a page's snapshot when it is new, changed or removed.
// Pure and built from the snapshot alone, so that a replay (the sink's, or the frontier's end-of-crawl sweep) gives
// the same record again: same key, same changeId, same content.
import type { CrawlChange } from "../../schemas/index.ts";
import type { ChangeTracking } from "./change-tracking.ts";
import type { Snapshot } from "./snapshot-store.ts";

export const changeId = (crawlId: string, urlKey: string): string => `${crawlId}|${urlKey}`;

/** The crawl.changes record of a snapshot taken by a job (a page or a tombstone), or null for a same page. */
export function changeRecord(s: Snapshot, kind: "crawl" | "batch" | undefined): CrawlChange | null {
  const t = JSON.parse(s.tracking) as ChangeTracking;
  if (t.changeStatus === "same") return null;
  return {
    changeId: changeId(s.crawlId, s.urlKey), crawlId: s.crawlId, teamId: s.teamId, ...(kind ? { kind } : {}), url: s.url, urlKey: s.urlKey, tag: s.tag,
    changeStatus: t.changeStatus, visibility: t.visibility, previousScrapeAt: t.previousScrapeAt, at: s.scrapedAt,
    ...(s.statusCode > 0 ? { statusCode: s.statusCode } : {}), ...(t.diff ? { diff: t.diff.text } : {}), ...(t.json ? { json: t.json } : {}),
  };
}
