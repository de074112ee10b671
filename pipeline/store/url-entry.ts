// One URL of a crawl as GET /v2/crawl/:id/urls and urls.jsonl show it, from its merged stored row (crawl-store.ts's
// mergeUrlRow). Here in the store layer because the embedded store builds a finished crawl's listing itself
// (url-listing-build.ts); the explaining and paging use case (usecases/crawl-urls.ts) reads the same entries.
import type { CrawlRecord, UrlRow } from "./crawl-store.ts";
import { URL_STATE } from "./crawl-store.ts";
import { URL_REASONS, type ReasonCounts, type UrlReason } from "./url-reason.ts";

export const URL_STATES = ["queued", "fetched", "failed", "blocked", "skipped"] as const;
export type UrlStateName = (typeof URL_STATES)[number];

/** One URL as the API and urls.jsonl show it. */
export interface UrlEntry {
  url: string;
  state: UrlStateName;
  reason: UrlReason;
  /** the rule, pattern, URL duplicated, or error; null when the reason says it all */
  detail: string | null;
  /** the page it was found on, "sitemap", or null for the start URL */
  discoveredFrom: string | null;
  depth: number;
  /** fetch attempts of a failed URL */
  attempts?: number;
}

const STATE_NAMES: Record<number, UrlStateName> = { [URL_STATE.queued]: "queued", [URL_STATE.done]: "fetched", [URL_STATE.failed]: "failed", [URL_STATE.blocked]: "blocked", [URL_STATE.skipped]: "skipped" };

/** The reason of a row written before reasons were recorded, from its state alone. */
const LEGACY_REASON: Record<UrlStateName, UrlReason> = { queued: "queued", fetched: "fetched", failed: "failed", blocked: "robots_blocked", skipped: "out_of_scope" };

/** A stored row as an entry; `crawl` turns what was still queued when a crawl ended into `cancelled`. */
export function urlEntry(row: UrlRow, crawl: Pick<CrawlRecord, "status">): UrlEntry {
  let state = STATE_NAMES[row.state] ?? "skipped";
  let reason = row.reason ?? LEGACY_REASON[state];
  // a redirect to a page already stored was fetched, but the crawl keeps the other URL
  if (reason === "duplicate") state = "skipped";
  if (state === "queued" && crawl.status === "cancelled") reason = "cancelled";
  return {
    url: row.url,
    state,
    reason,
    detail: row.detail ? row.detail : null,
    discoveredFrom: row.from ? row.from : null,
    depth: row.depth,
    ...(row.attempts ? { attempts: row.attempts } : {}),
  };
}

/** The listing's order: by depth, then URL. */
export const byDepthThenUrl = (a: { depth: number; url: string }, b: { depth: number; url: string }): number =>
  a.depth - b.depth || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);

/** An entry's state and reason in one byte (what a listing kept on disk filters on). */
export const entryCode = (e: Pick<UrlEntry, "state" | "reason">): number => URL_STATES.indexOf(e.state) * 32 + URL_REASONS.indexOf(e.reason);

/** The skip reasons whose URLs past CRAWL_URL_LOG_MAX are counted but not listed. */
export const UNLISTED_REASONS = ["out_of_scope", "excluded", "too_deep", "over_limit", "not_followed"] as const;

/** Skipped URLs counted but not listed (past CRAWL_URL_LOG_MAX), from the listed ones of each skip reason. */
export function unlistedFrom(counts: ReasonCounts | undefined, listedSkipped: (r: UrlReason) => number): number {
  if (!counts) return 0;
  let n = 0;
  for (const r of UNLISTED_REASONS) n += Math.max(0, (counts[r] ?? 0) - listedSkipped(r));
  return n;
}
