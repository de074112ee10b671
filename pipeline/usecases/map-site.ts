// POST /v2/map: the URLs of a site, at once (synchronous, as in Firecrawl). Sitemaps (robots.txt `Sitemap:` lines,
// the usual locations, indexes, gzip) and the links of a bounded number of fetched pages, through the same fetcher,
// robots.txt rules, sitemap reader, URL scope and dedup key as a crawl. 1 credit per call.
import { randomUUID } from "node:crypto";
import type { Converter } from "../convert/converter.ts";
import type { Fetcher } from "../fetch-render/fetcher.ts";
import type { Robots } from "../fetch-render/robots.ts";
import { discoverSitemapUrls, type SitemapWarning } from "../fetch-render/sitemaps.ts";
import type { Clock } from "../runtime/clock.ts";
import { withDeadline } from "../runtime/deadline.ts";
import { PageError, errorMessage } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import type { AuthStore } from "../store/auth-store.ts";
import { inScope } from "../url/scope.ts";
import { LinkSet, rankLinks, type MapLink } from "./map-rank.ts";

export interface MapDeps {
  fetcher: Fetcher;
  convert: Converter;
  robots: { get(url: string): Promise<Robots> };
  /** the credit ledger (absent: the call is not counted) */
  authStore?: Pick<AuthStore, "recordUsage">;
  clock: Clock;
  log: Logger;
}

export interface MapSettings {
  url: string;
  search?: string;
  sitemap: "include" | "skip" | "only";
  includeSubdomains: boolean;
  ignoreQueryParameters: boolean;
  limit: number;
  /** the whole map; undefined: no limit beyond each fetch's own */
  timeoutMs?: number;
  headers?: Record<string, string>;
  teamId: string;
  /** from the configuration */
  maxPages: number;
  maxSitemaps: number;
  /** largest inflated size of one gzipped sitemap (SITEMAP_MAX_BYTES) */
  sitemapMaxBytes: number;
  fetchTimeoutMs: number;
  robotsUserAgent: string;
}

export interface MapResult {
  id: string;
  links: MapLink[];
  warning?: string;
}

/** Pages fetched at once while looking for links. */
const PAGE_CONCURRENCY = 4;

export async function mapSite(deps: MapDeps, s: MapSettings): Promise<MapResult> {
  const id = randomUUID();
  const work = collect(deps, s);
  const result = s.timeoutMs === undefined ? await work : await withDeadline(work, s.timeoutMs, () => new PageError("MAP_TIMEOUT", `The map operation timed out after ${s.timeoutMs} ms`));
  await deps.authStore?.recordUsage([{ teamId: s.teamId, jobId: id, credits: 1, at: deps.clock.now() }]);
  return { id, ...result };
}

async function collect(deps: MapDeps, s: MapSettings): Promise<{ links: MapLink[]; warning?: string }> {
  const log = deps.log.child({ component: "map", url: s.url });
  const started = performance.now();
  const fetchTimeoutMs = Math.min(s.fetchTimeoutMs, s.timeoutMs ?? s.fetchTimeoutMs);
  // the start page first: a redirect of the start host moves the map to the target site
  const first = s.sitemap === "only" || !(await allowed(deps, s, s.url)) ? null : await fetchPage(deps, s.url, s, fetchTimeoutMs);
  const base = first?.finalUrl ?? s.url;
  const robots = await deps.robots.get(base);
  const pages = s.sitemap === "only" ? Promise.resolve([]) : followLinks(deps, s, base, first, fetchTimeoutMs);
  const sitemap = s.sitemap === "skip"
    ? { urls: [], sitemaps: 0, warnings: [] }
    : await discoverSitemapUrls(deps.fetcher, base, robots.sitemaps, { maxSitemaps: s.maxSitemaps, maxBytes: s.sitemapMaxBytes, maxUrls: s.search ? 100_000 : Math.min(100_000, s.limit * 2 + 1000), timeoutMs: fetchTimeoutMs });
  const fromPages = await pages;
  const sitemapMs = Math.round(performance.now() - started);

  const set = new LinkSet(s.ignoreQueryParameters);
  const scope = { crawlEntireDomain: true, allowSubdomains: s.includeSubdomains };
  const candidates: MapLink[] = [...(fromPages[0] ? [fromPages[0]] : []), ...sitemap.urls.map((url) => ({ url })), ...fromPages.slice(1)];
  const robotsOf = await robotsByOrigin(deps, candidates, base);
  for (const link of candidates) {
    let verdict;
    try {
      verdict = inScope(base, link.url, scope);
    } catch {
      continue; // a sitemap <loc> that is not a URL
    }
    if (verdict !== "ok") continue;
    if (!robotsOf.get(new URL(link.url).origin)?.isAllowed(link.url, s.robotsUserAgent)) continue;
    set.add(link);
  }
  const ranked = s.search ? rankLinks(set.links(), s.search) : set.links();
  const links = ranked.slice(0, s.limit);
  for (const w of sitemap.warnings) log.warn({ sitemap: w.url, code: w.code, err: w.error }, "map: sitemap skipped");
  log.info({ sitemaps: sitemap.sitemaps, sitemapUrls: sitemap.urls.length, skipped: sitemap.warnings.length, pages: fromPages.length, links: links.length, discoverMs: sitemapMs, listMs: Math.round(performance.now() - started) - sitemapMs }, "mapped");
  const warnings = [skippedSitemaps(sitemap.warnings), fewResults(s.url, links.length)].filter((w) => w !== undefined);
  return { links, ...(warnings.length ? { warning: warnings.join(" ") } : {}) };
}

/** Which sitemaps were left out and why (decompression bombs, oversized files), so a short map is not taken as the whole site. */
function skippedSitemaps(skipped: SitemapWarning[]): string | undefined {
  if (skipped.length === 0) return undefined;
  const list = skipped.map((w) => `${w.url} (${w.error})`).join(", ");
  return `${skipped.length} sitemap(s) were skipped because they are larger than this server accepts (SITEMAP_MAX_BYTES once a gzipped file is inflated, FETCH_MAX_BYTES for a response); the URLs they list are not in this map: ${list}.`;
}

/** The reference's hint when a map of a deep URL finds (almost) nothing. */
function fewResults(url: string, count: number): string | undefined {
  const u = new URL(url);
  if (count > 1 || (u.pathname === "/" || u.pathname === "")) return undefined;
  return `Only ${count} result(s) found. For broader coverage, try mapping the base domain: ${u.hostname}`;
}

async function robotsByOrigin(deps: MapDeps, links: MapLink[], base: string): Promise<Map<string, Robots>> {
  const origins = new Set<string>([new URL(base).origin]);
  for (const l of links) {
    try {
      origins.add(new URL(l.url).origin);
    } catch {
      continue;
    }
    if (origins.size > 50) break; // subdomains beyond this many keep the robots.txt they get below (allow-all on failure)
  }
  const entries = await Promise.all([...origins].map(async (o) => [o, await deps.robots.get(o)] as const));
  return new Map(entries);
}

async function allowed(deps: MapDeps, s: MapSettings, url: string): Promise<boolean> {
  return (await deps.robots.get(url)).isAllowed(url, s.robotsUserAgent);
}

interface PageLinks {
  finalUrl: string;
  self: MapLink;
  links: string[];
}

async function fetchPage(deps: MapDeps, url: string, s: MapSettings, timeoutMs: number): Promise<PageLinks | null> {
  try {
    const fetched = await deps.fetcher.fetch({ url, timeoutMs, headers: s.headers });
    const { document, links } = await deps.convert({ ...fetched, scrapeId: randomUUID() }, { formats: ["links"], onlyMainContent: false });
    const m = document.metadata;
    const title = typeof m.title === "string" ? m.title : undefined;
    const description = typeof m.description === "string" ? m.description : undefined;
    return { finalUrl: fetched.finalUrl, self: { url: fetched.finalUrl, ...(title ? { title } : {}), ...(description ? { description } : {}) }, links };
  } catch (err) {
    if (!(err instanceof PageError)) throw err;
    deps.log.debug({ url, code: err.code, err: errorMessage(err) }, "map: page not read");
    return null;
  }
}

/** Breadth-first from the start page over in-scope links, up to `maxPages` pages: each page and its links. */
async function followLinks(deps: MapDeps, s: MapSettings, base: string, first: PageLinks | null, timeoutMs: number): Promise<MapLink[]> {
  const out: MapLink[] = [];
  if (!first) return [{ url: base }];
  const scope = { crawlEntireDomain: true, allowSubdomains: s.includeSubdomains };
  const queued = new Set<string>([first.finalUrl, s.url]);
  const queue: string[] = [];
  const take = (page: PageLinks) => {
    out.push(page.self);
    for (const link of page.links) {
      out.push({ url: link });
      if (queued.has(link) || queued.size >= s.maxPages + 1000) continue;
      queued.add(link);
      let ok: boolean;
      try {
        ok = inScope(base, link, scope) === "ok";
      } catch {
        ok = false;
      }
      if (ok) queue.push(link);
    }
  };
  take(first);
  let fetched = 1;
  while (queue.length > 0 && fetched < s.maxPages) {
    const batch = queue.splice(0, Math.min(PAGE_CONCURRENCY, s.maxPages - fetched));
    fetched += batch.length;
    const pages = await Promise.all(batch.map(async (url) => ((await allowed(deps, s, url)) ? fetchPage(deps, url, s, timeoutMs) : null)));
    for (const p of pages) if (p) take(p);
  }
  return out;
}
