// Explaining a crawl: every URL it saw with its state and reason (GET /v2/crawl/:id/urls, the CLI's urls.jsonl), and
// one URL's answer, also for a URL the crawl never reached (GET /v2/crawl/:id/urls/explain). Both stores return the
// same rows (CrawlStore.loadUrls); everything after that is here, once.
import type { CrawlRecord, CrawlStore } from "../store/crawl-store.ts";
import { FROM_SITEMAP, URL_REASONS, type ReasonCounts, type UrlReason } from "../store/url-reason.ts";
import { byDepthThenUrl, URL_STATES, unlistedFrom, urlEntry, type UrlEntry, type UrlStateName } from "../store/url-entry.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import { scopeRule } from "../url/scope.ts";

export { URL_STATES, urlEntry, type UrlEntry, type UrlStateName };

/**
 * Every URL of a crawl, by depth, then URL (a URL keeps its place when its state changes; while the crawl runs, URLs
 * found later may come before those already paged over).
 */
export async function crawlUrls(store: CrawlStore, crawl: CrawlRecord): Promise<{ entries: UrlEntry[]; unlisted: number }> {
  const rows = await store.loadUrls(crawl.crawlId);
  rows.sort(byDepthThenUrl);
  // a crawled URL past the bound has lost its URL once ClickHouse merged its rows (only the latest one is kept)
  const entries = rows.filter((r) => r.url).map((r) => urlEntry(r, crawl));
  return { entries, unlisted: unlistedCount(crawl.reasons, entries) + rows.length - entries.length };
}

export interface UrlListPage {
  data: UrlEntry[];
  /** entries matching the filters */
  total: number;
  nextSkip?: number;
}

/** One page of the entries matching `state` and `reason`. */
export function pageUrls(entries: UrlEntry[], q: { state?: string; reason?: string; skip: number; limit: number }): UrlListPage {
  const matching = entries.filter((e) => (!q.state || e.state === q.state) && (!q.reason || e.reason === q.reason));
  const data = matching.slice(q.skip, q.skip + q.limit);
  return { data, total: matching.length, ...(q.skip + q.limit < matching.length ? { nextSkip: q.skip + q.limit } : {}) };
}

/**
 * One page of a crawl's URLs (as `pageUrls` of `crawlUrls`), with the skipped URLs not listed. A store that keeps
 * listings (the embedded one, on disk) pages them by position: a finished crawl's built when it ended, a running
 * crawl's rebuilt in the background every few seconds (embedded-url-listings.ts); otherwise every row is read.
 */
export async function crawlUrlPage(store: CrawlStore, crawl: CrawlRecord, q: { state?: string; reason?: string; skip: number; limit: number }): Promise<UrlListPage & { unlisted: number }> {
  if (!store.urlListings) {
    const { entries, unlisted } = await crawlUrls(store, crawl);
    return { ...pageUrls(entries, q), unlisted };
  }
  const listing = await store.urlListings.listing(crawl);
  const state = q.state === undefined ? -1 : URL_STATES.indexOf(q.state as UrlStateName);
  const reason = q.reason === undefined ? -1 : URL_REASONS.indexOf(q.reason as UrlReason);
  const match = state < 0 && reason < 0 ? undefined : (code: number) => (state < 0 || code >> 5 === state) && (reason < 0 || (code & 31) === reason);
  const { items, total } = listing.page(q.skip, q.limit, match);
  return { data: items.map((j) => JSON.parse(j) as UrlEntry), total, unlisted: listing.unlisted, ...(q.skip + q.limit < total ? { nextSkip: q.skip + q.limit } : {}) };
}

/** Skipped URLs counted but not listed (past CRAWL_URL_LOG_MAX). */
export function unlistedCount(counts: ReasonCounts | undefined, entries: UrlEntry[]): number {
  return unlistedFrom(counts, (r) => entries.filter((e) => e.state === "skipped" && e.reason === r).length);
}

export interface Explanation {
  url: string;
  /** the crawl saw this URL (or another spelling of its page) */
  seen: boolean;
  entry: UrlEntry | null;
  explanation: string;
}

const where = (e: UrlEntry) =>
  e.discoveredFrom === null ? "the start URL" : e.discoveredFrom === FROM_SITEMAP ? "found in the sitemap" : `linked from ${e.discoveredFrom} (depth ${e.depth})`;

/** One sentence for an entry. */
export function describe(e: UrlEntry): string {
  const d = e.detail ?? "";
  switch (e.reason) {
    case "fetched": return `Fetched and stored; ${where(e)}.`;
    case "queued": return `Queued, not fetched yet; ${where(e)}.`;
    case "cancelled": return `Still queued when the crawl was cancelled; ${where(e)}.`;
    case "failed": return `Failed${e.attempts ? ` after ${e.attempts} attempt(s)` : ""}: ${d}; ${where(e)}.`;
    case "robots_blocked": return `Blocked by robots.txt (${d}); ${where(e)}.`;
    case "duplicate": return `A duplicate of ${d}, which the crawl took instead; ${where(e)}.`;
    case "out_of_scope": return `Outside the crawl's scope (${d}); ${where(e)}.`;
    case "excluded": return `Excluded by the excludePaths pattern ${JSON.stringify(d)}; ${where(e)}.`;
    case "too_deep": return `Beyond maxDiscoveryDepth (${d}); ${where(e)}.`;
    case "over_limit": return `Over the crawl's limit (${d}); ${where(e)}.`;
    case "not_followed": return `Not followed (${d}); ${where(e)}.`;
  }
}

/** Why the crawl did what it did with `url` (already resolved: absolute, no fragment). */
export async function explainUrl(store: CrawlStore, crawl: CrawlRecord, url: string): Promise<Explanation> {
  const rows = await store.loadUrls(crawl.crawlId);
  const key = crawlUrlKey(url, crawl.options);
  const row = rows.find((r) => r.urlKey === `=${url}`) ?? rows.find((r) => r.urlKey === key && r.url);
  if (row) {
    const entry = urlEntry(row, crawl);
    const spelled = row.url !== url && row.urlKey === key ? ` (as ${row.url}, the same page for this crawl)` : "";
    return { url, seen: true, entry, explanation: describe(entry).replace(/^(\S+)/, `$1${spelled}`) };
  }
  const parts = [crawl.status === "scraping" ? "Not seen yet: no page fetched so far links to it" : "Never seen: no page the crawl fetched links to it"];
  const sitemap = crawl.options.sitemap ?? "include";
  parts.push(sitemap === "skip" ? "and sitemaps were not read (sitemap: skip)" : "and the sitemap does not list it");
  const { verdict, rule } = scopeRule(crawl.url, url, crawl.options, crawl.url);
  if (verdict === "excluded") parts.push(`; had one linked to it, it would have been excluded by the excludePaths pattern ${JSON.stringify(rule)}`);
  else if (verdict !== "ok") parts.push(`; had one linked to it, it would have been outside the scope (${verdict}: ${rule})`);
  const unlisted = unlistedCount(crawl.reasons, rows.filter((r) => r.url).map((r) => urlEntry(r, crawl)));
  if (unlisted > 0) parts.push(`; note: ${unlisted} skipped URL(s) were counted but not listed (CRAWL_URL_LOG_MAX), it may be one of them`);
  return { url, seen: false, entry: null, explanation: `${parts.join(" ").replace(/ ;/g, ";")}.` };
}
