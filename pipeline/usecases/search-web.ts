// POST /v2/search: results from the configured backend (SearXNG, or Trawl's own stored documents), filtered by
// domain, each scraped through the single-page scrape use case when scrape options are given.
import { randomUUID } from "node:crypto";
import type { PageDocument } from "../../schemas/index.ts";
import { withDeadline } from "../runtime/deadline.ts";
import { errorMessage, PageError } from "../runtime/errors.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { SearchBackend, SearchHit } from "../search/search-backend.ts";
import type { AuthStore } from "../store/auth-store.ts";
import { documentTokens } from "../store/crawl-store.ts";
import { scrapePage, type ScrapeDeps, type ScrapeOptions } from "./scrape-page.ts";

export interface SearchDeps extends ScrapeDeps {
  backend: SearchBackend;
  /** the credit ledger (absent: the search is not counted) */
  authStore?: Pick<AuthStore, "recordUsage">;
  clock: Clock;
  log: Logger;
}

export interface SearchSettings {
  query: string;
  limit: number;
  includeDomains?: string[];
  excludeDomains?: string[];
  timeoutMs: number;
  /** given: every result is scraped with these options */
  scrape?: ScrapeOptions & { timeoutMs?: number };
  fetchTimeoutMs: number;
  teamId: string;
}

export type WebResult = SearchHit & Partial<PageDocument>;

export interface SearchResult {
  id: string;
  web: WebResult[];
  creditsUsed: number;
}

const SCRAPE_CONCURRENCY = 4;

export async function searchWeb(deps: SearchDeps, s: SearchSettings): Promise<SearchResult> {
  const id = randomUUID();
  const work = async () => {
    const filtered = Boolean(s.includeDomains?.length || s.excludeDomains?.length);
    const hits = (await deps.backend.search({ query: s.query, limit: filtered ? Math.min(100, s.limit * 3) : s.limit, timeoutMs: s.timeoutMs, teamId: s.teamId }))
      .filter((h) => domainAllowed(h.url, s.includeDomains, s.excludeDomains))
      .slice(0, s.limit);
    return s.scrape ? scrapeAll(deps, hits, s.scrape, Math.min(s.fetchTimeoutMs, s.timeoutMs)) : { web: hits as WebResult[], credits: 0 };
  };
  const { web, credits } = await withDeadline(work(), s.timeoutMs, () => new PageError("SEARCH_TIMEOUT", `The search timed out after ${s.timeoutMs} ms`));
  // Firecrawl's price: 2 credits per 10 results, plus each scraped page
  const creditsUsed = Math.ceil(web.length / 10) * 2 + credits;
  // the LLM tokens of scraped results with a json / summary format
  const tokens = web.reduce((n, w) => n + (w.metadata ? documentTokens({ metadata: w.metadata }) : 0), 0);
  await deps.authStore?.recordUsage([{ teamId: s.teamId, jobId: id, credits: creditsUsed, ...(tokens ? { tokens } : {}), at: deps.clock.now() }]);
  deps.log.info({ searchId: id, backend: deps.backend.name, results: web.length, creditsUsed }, "searched");
  return { id, web, creditsUsed };
}

/** `example.com` admits example.com and its subdomains. */
function domainAllowed(url: string, include?: string[], exclude?: string[]): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const matches = (d: string) => {
    const domain = d.toLowerCase().replace(/^\*?\.?/, "").replace(/\/.*$/, "");
    return host === domain || host.endsWith(`.${domain}`);
  };
  if (exclude?.some(matches)) return false;
  return !include?.length || include.some(matches);
}

async function scrapeAll(deps: SearchDeps, hits: SearchHit[], options: ScrapeOptions & { timeoutMs?: number }, timeoutMs: number): Promise<{ web: WebResult[]; credits: number }> {
  const web: WebResult[] = new Array(hits.length);
  let credits = 0;
  let next = 0;
  const worker = async () => {
    while (next < hits.length) {
      const i = next++;
      const hit = hits[i] as SearchHit;
      try {
        const { document, credits: c } = await scrapePage(deps, hit.url, options, options.timeoutMs ?? timeoutMs);
        credits += c;
        web[i] = { ...document, ...hit };
      } catch (err) {
        if (!(err instanceof PageError)) throw err;
        web[i] = { ...hit, metadata: { sourceURL: hit.url, url: hit.url, scrapeId: randomUUID(), statusCode: err.statusCode ?? 0, error: errorMessage(err) } };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SCRAPE_CONCURRENCY, hits.length) }, worker));
  return { web, credits };
}
