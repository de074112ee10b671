// The sink's part of change tracking: a page's changeTracking against its previous snapshot, and the snapshot that
// the page leaves for the next job. The comparison is made here, where a page's final document (after extraction)
// is stored, once per page of every job kind (crawl, batch).
import type { CrawlPage } from "../../schemas/index.ts";
import { compareScrape, type ChangeMode, type ChangeTracking, type PreviousScrape } from "../store/change-tracking.ts";
import type { Snapshot, SnapshotStore } from "../store/snapshot-store.ts";

type Freshness = NonNullable<CrawlPage["freshness"]>;

export const historyKey = (teamId: string, tag: string, urlKey: string): string => `${teamId}\u0000${tag}\u0000${urlKey}`;

/** The latest snapshot of every change-tracked page of a batch (one read per team and tag). */
export async function previousSnapshots(store: SnapshotStore, pages: CrawlPage[]): Promise<Map<string, Snapshot>> {
  const groups = new Map<string, { teamId: string; tag: string; keys: string[] }>();
  for (const p of pages) {
    if (!p.freshness) continue;
    const teamId = p.teamId ?? "";
    const g = groups.get(historyKey(teamId, p.freshness.tag, "")) ?? { teamId, tag: p.freshness.tag, keys: [] };
    g.keys.push(p.freshness.urlKey ?? p.urlKey);
    groups.set(historyKey(teamId, p.freshness.tag, ""), g);
  }
  const out = new Map<string, Snapshot>();
  for (const g of groups.values()) {
    for (const [urlKey, s] of await store.latest(g.teamId, g.tag, g.keys)) out.set(historyKey(g.teamId, g.tag, urlKey), s);
  }
  return out;
}

/** What a comparison needs of a snapshot (a tombstone has no document). */
export function previousScrape(s: Snapshot): PreviousScrape {
  if (s.changeStatus === "removed" && s.statusCode === 0) return { scrapedAt: s.scrapedAt, markdown: "", removed: true };
  const doc = JSON.parse(s.doc) as { markdown?: string; json?: unknown };
  return { scrapedAt: s.scrapedAt, markdown: doc.markdown ?? "", ...(doc.json !== undefined ? { json: doc.json } : {}) };
}

/**
 * Sets `page.document.changeTracking` and returns the page's new snapshot. A snapshot this job already took (a replay)
 * answers what it answered then. With `trackingJson` the json extracted for the comparison stays in the snapshot and
 * leaves the document.
 */
export function trackChanges(page: CrawlPage, f: Freshness, previous: Snapshot | null, now: number): Snapshot {
  const document = page.document;
  const statusCode = Number(document.metadata.statusCode ?? 200);
  const replay = previous !== null && previous.crawlId === page.crawlId && previous.tracking !== "";
  const tracking: ChangeTracking = replay
    ? (JSON.parse(previous.tracking) as ChangeTracking)
    : compareScrape(previous ? previousScrape(previous) : null, { markdown: document.markdown ?? "", json: document.json, statusCode }, f.modes as ChangeMode[]);
  const stored = { ...document };
  delete stored.changeTracking;
  if (f.trackingJson) delete document.json;
  document.changeTracking = tracking as unknown as NonNullable<CrawlPage["document"]["changeTracking"]>;
  return {
    teamId: page.teamId ?? "", tag: f.tag, urlKey: f.urlKey ?? page.urlKey, url: String(document.metadata.sourceURL ?? document.metadata.url ?? ""), crawlId: page.crawlId,
    origin: f.origin ?? "", scrapedAt: replay ? previous.scrapedAt : now, statusCode, changeStatus: tracking.changeStatus, contentHash: f.contentHash ?? "",
    etag: f.etag ?? "", lastModified: f.lastModified ?? "", optionsHash: f.optionsHash, doc: JSON.stringify(stored), links: f.links ?? [],
    tracking: JSON.stringify(tracking),
  };
}
