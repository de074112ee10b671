// Reading a crawl for its caller: the record (or why there is none), one chunk of its documents, its errors.
// Used by GET /v2/crawl/:id and its errors route; the WebSocket catchup reads the same record.
import type { CrawlRecord, CrawlStore } from "../store/crawl-store.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { ROBOTS_BLOCKED } from "../runtime/errors.ts";

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

/** The status of a crawl and one chunk of its documents (at most `maxBytes` of JSON, at most `limit` documents). */
export async function crawlStatus(store: CrawlStore, crawl: CrawlRecord, now: number, chunk: { skip: number; limit: number; maxBytes: number }): Promise<StatusChunk> {
  const page = await store.pageDocuments(crawl.crawlId, chunk.skip, chunk.maxBytes, chunk.limit);
  const head: Record<string, unknown> = {
    success: crawl.status !== "failed",
    status: crawl.status,
    completed: crawl.completed,
    total: crawl.total,
    creditsUsed: crawl.creditsUsed,
    expiresAt: new Date(Math.floor(expiresAtOf(crawl, now) / 1000) * 1000).toISOString(),
  };
  if (crawl.status === "failed") head.error = crawl.error || "the crawl failed";
  if (crawl.failed > 0) head.failed = crawl.failed;
  if (crawl.status !== "scraping") {
    const blocked = (await store.listErrors(crawl.crawlId)).filter((e) => e.code === ROBOTS_BLOCKED).length;
    const warning = statusWarning(crawl, blocked);
    if (warning) head.warning = warning;
  }
  return { head, docs: page.docs, ...(page.more ? { nextSkip: page.nextSkip } : {}) };
}

/** The status `warning`, as the anchor words it (only once a crawl has ended). */
export function statusWarning(crawl: CrawlRecord, robotsBlocked: number): string | undefined {
  const prompt = crawl.options.promptNotApplied;
  if (prompt) return [prompt, crawl.status === "scraping" ? undefined : endWarning(crawl, robotsBlocked)].filter(Boolean).join(" ");
  return crawl.status === "scraping" ? undefined : endWarning(crawl, robotsBlocked);
}

function endWarning(crawl: CrawlRecord, robotsBlocked: number): string | undefined {
  if (robotsBlocked > 0) {
    return `${robotsBlocked} URL(s) were not crawled because robots.txt disallows them (see robotsBlocked at GET /v2/crawl/${crawl.crawlId}/errors). To fetch a single such page, use the /scrape endpoint.`;
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
