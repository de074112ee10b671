// Reading a crawl for its caller: the record (or why there is none), one chunk of its documents, its errors.
// Used by GET /v2/crawl/:id and its errors route; the WebSocket catchup reads the same record.
import type { CrawlRecord, CrawlStore } from "../store/crawl-store.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { ROBOTS_BLOCKED } from "../runtime/errors.ts";
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";

/** Errors recorded for a URL that the caller is not shown in `errors` (robots.txt blocks are listed apart). */
const HIDDEN_ERRORS = new Set(["SCRAPE_RACED_REDIRECT", ROBOTS_BLOCKED]);

/** The crawl a team may read, or why not: another team's crawl is "missing" too (no existence leak). */
export async function findCrawl(store: CrawlStore, crawlId: string, teamId: string, now: number): Promise<CrawlRecord | "missing" | "expired"> {
  const crawl = await store.getCrawl(crawlId);
  if (!crawl || crawl.teamId !== teamId) return "missing";
  if (crawl.status !== "scraping" && crawl.expiresAt < now) return "expired";
  return crawl;
}

/** When the results expire: 24 h after the end, or 24 h from now while the crawl runs. */
export const expiresAtOf = (crawl: CrawlRecord, now: number) => (crawl.status === "scraping" ? now + RETENTION_MS : crawl.expiresAt);

export interface StatusChunk {
  /** The status fields, without `data` and `next`. */
  head: Record<string, unknown>;
  /** Documents as stored JSON text, in seq order. */
  docs: string[];
  /** The `skip` of the next chunk when more stored documents exist. */
  nextSkip?: number;
}

/**
 * The status of a crawl and one chunk of its documents (at most `maxBytes` of JSON, at most `limit` documents).
 * `data` never runs ahead of `completed`: the sink stores a page (seq 0, 1, ... in completion order) before the
 * frontier counts it, so between the two a read would see more documents than `completed`. While the crawl runs only
 * seqs below `completed` are served (the rest come with the next poll). A cancelled crawl serves every stored page at
 * once (what is stored stays, and nothing more comes) and shows `completed` as at least what it serves: a page
 * stored just before the cancel is counted (and billed) when its PageDone arrives, a moment later.
 */
export async function crawlStatus(
  store: CrawlStore, crawl: CrawlRecord, now: number, chunk: { skip: number; limit: number; maxBytes: number }, snapshots?: SnapshotStore,
): Promise<StatusChunk> {
  const capped = crawl.status === "scraping";
  const counted = capped ? Math.max(0, crawl.completed - chunk.skip) : chunk.limit;
  const page = counted === 0
    ? { docs: [], nextSkip: chunk.skip, more: false }
    : await store.pageDocuments(crawl.crawlId, chunk.skip, chunk.maxBytes, Math.min(chunk.limit, counted));
  const head: Record<string, unknown> = {
    success: crawl.status !== "failed",
    status: crawl.status,
    completed: crawl.completed,
    total: crawl.total,
    creditsUsed: crawl.creditsUsed,
    expiresAt: new Date(Math.floor(expiresAtOf(crawl, now) / 1000) * 1000).toISOString(),
  };
  head.createdAt = new Date(crawl.createdAt).toISOString();
  if (crawl.status !== "scraping" && crawl.completedAt > 0) {
    head.completedAt = new Date(crawl.completedAt).toISOString();
    // milliseconds (Firecrawl's source for the unit was not available; documented in docs/api.md)
    head.duration = Math.max(0, crawl.completedAt - crawl.createdAt);
  }
  if (crawl.status === "failed") head.error = crawl.error || "the crawl failed";
  if (crawl.failed > 0) head.failed = crawl.failed;
  if (crawl.status === "scraping") {
    // held by its team's concurrency limit (not yet admitted)
    if (crawl.options.teamQueue && crawl.options.teamQueue.admittedAt === undefined) head.warning = QUEUED_WARNING;
  } else {
    const errors = await store.listErrors(crawl.crawlId);
    const blocked = errors.filter((e) => e.code === ROBOTS_BLOCKED).length;
    const warning = statusWarning(crawl, blocked, errors.filter((e) => e.code === "SITEMAP_TOO_LARGE").length);
    if (warning) head.warning = warning;
  }
  if (crawl.status === "cancelled") head.completed = Math.max(crawl.completed, chunk.skip + page.docs.length);
  const more = page.more && (!capped || page.nextSkip < crawl.completed);
  // change tracking: the last chunk of a completed crawl ends with the pages it no longer reached
  const removed = !more && crawl.status === "completed" && snapshots ? await removedDocuments(snapshots, crawl) : [];
  return { head, docs: removed.length ? [...page.docs, ...removed] : page.docs, ...(more ? { nextSkip: page.nextSkip } : {}) };
}

/**
 * The pages of the crawl's lineage that it no longer reached (recorded at its end), as documents without content:
 * `changeTracking.changeStatus` "removed", visibility "hidden". They follow the stored documents on the last page of
 * `data` and are not counted in `completed` (nothing was scraped or billed).
 */
export async function removedDocuments(snapshots: SnapshotStore, crawl: CrawlRecord): Promise<string[]> {
  const ct = crawl.options.changeTracking;
  if (!ct || crawl.options.kind === "batch") return [];
  const rows = await snapshots.removedBy(crawl.teamId || TEAM_BYPASS, ct.tag, crawl.crawlId);
  return rows.map((r) => JSON.stringify({
    markdown: "",
    metadata: { url: r.url, sourceURL: r.url, statusCode: 404, scrapeId: `removed:${r.urlKey}`, error: "no longer reached by this crawl: it was a page of an earlier crawl of the same site" },
    changeTracking: JSON.parse(r.tracking) as unknown,
  }));
}

/**
 * Said while a job waits for a slot of its team's concurrency limit (every new job passes the team's admission; with
 * a free slot, or no limit, that takes milliseconds).
 */
export const QUEUED_WARNING = "This job is queued for a slot of its team's concurrency limit: it starts as soon as one is free.";

/** The status `warning`, as the anchor words it (only once a crawl has ended). */
export function statusWarning(crawl: CrawlRecord, robotsBlocked: number, sitemapsSkipped = 0): string | undefined {
  const prompt = crawl.options.promptNotApplied;
  if (prompt) return [prompt, crawl.status === "scraping" ? undefined : endWarning(crawl, robotsBlocked, sitemapsSkipped)].filter(Boolean).join(" ");
  return crawl.status === "scraping" ? undefined : endWarning(crawl, robotsBlocked, sitemapsSkipped);
}

function endWarning(crawl: CrawlRecord, robotsBlocked: number, sitemapsSkipped: number): string | undefined {
  if (robotsBlocked > 0) {
    return `${robotsBlocked} URL(s) were not crawled because robots.txt disallows them (see robotsBlocked at GET /v2/crawl/${crawl.crawlId}/errors). To fetch a single such page, use the /scrape endpoint.`;
  }
  if (sitemapsSkipped > 0) {
    return `${sitemapsSkipped} sitemap(s) were skipped because they are larger than this server accepts once decompressed (see GET /v2/crawl/${crawl.crawlId}/errors); their URLs were not added to the crawl.`;
  }
  const start = new URL(crawl.url);
  if (crawl.options.kind !== "batch" && crawl.completed <= 1 && start.pathname !== "/" && !crawl.options.crawlEntireDomain) {
    return `Only ${crawl.completed} result(s) found. For broader coverage, try crawling with crawlEntireDomain=true or start from a higher-level path like ${start.origin}/`;
  }
  return undefined;
}

/** GET /v2/crawl/:id/errors: failed URLs (robots.txt blocks listed apart). */
export async function crawlErrors(store: CrawlStore, crawlId: string) {
  const errors = await store.listErrors(crawlId);
  return {
    errors: errors.filter((e) => !HIDDEN_ERRORS.has(e.code)).map((e) => ({ id: e.urlKey, timestamp: new Date(e.at).toISOString(), url: e.url, code: e.code, error: e.error })),
    robotsBlocked: errors.filter((e) => e.code === ROBOTS_BLOCKED).map((e) => e.url),
  };
}
