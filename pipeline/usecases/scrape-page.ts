// The fetch -> convert -> document use case for one page, shared by POST /v2/scrape and the CLI (`trawl scrape`).
// The crawl stages run the same parts (Fetcher.fetch in fetch-render, the Converter in convert).
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { baseFreshness } from "../store/page-freshness.ts";
import { trackChanges } from "../sink/track-changes.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import type { CrawlPage } from "../../schemas/index.ts";
import { randomUUID } from "node:crypto";
import { addLockdownCredits, extractSpec, markHttpError, wantsExtraction, type Converted, type FetchedPage } from "../convert/document.ts";
import { parseHtml } from "../convert/parse-html.ts";
import { extractInto, extractionCredits } from "../extract-json/extract-page.ts";
import type { JsonProvider } from "../extract-json/provider.ts";
import { precomputedRules, rulesProvider, type RulesResult } from "../extract-json/rules.ts";
import { createLogger, type Logger } from "../runtime/logger.ts";
import type { ConvertOptions, Converter } from "../convert/converter.ts";
import type { Fetcher } from "../fetch-render/fetcher.ts";
import { cachedFetch, cacheOnly, type CacheDeps } from "../fetch-render/cached-fetch.ts";
import type { Clock } from "../runtime/clock.ts";
import { RETENTION_MS, scrapeJobId } from "../runtime/constants.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { publishScreenshots, type ScreenshotStore } from "../store/screenshot-store.ts";
import { browserOption, scriptBuilt, type RenderMode } from "../browser/needs-render.ts";
import type { Renderer } from "../browser/renderer.ts";
import { renderRequest } from "../render/render.ts";
import { errorCode, errorMessage, invalidField } from "../runtime/errors.ts";
import type { CrawlOptions } from "../../schemas/index.ts";

/** What one page's scrape takes: conversion options plus request headers, the page cache and the browser settings. */
export type ScrapeOptions = ConvertOptions & { json?: { schema?: Record<string, unknown>; prompt?: string }; headers?: Record<string, string>; maxAgeMs?: number; storeInCache?: boolean; question?: string; highlightsQuery?: string }
  & Pick<CrawlOptions, "waitForMs" | "actions" | "screenshot" | "mobile" | "skipTlsVerification" | "fastMode" | "blockAds" | "minAgeMs" | "lockdown" | "changeTracking">;

export interface ScrapeDeps {
  fetcher: Fetcher;
  convert: Converter;
  /** maxAge / storeInCache (absent: no page cache) */
  cache?: CacheDeps;
  /** headless Chromium (absent: static only) and RENDER */
  renderer?: Renderer;
  renderMode?: RenderMode;
  /** json / summary formats (absent: the rules provider) */
  extractor?: JsonProvider;
  log?: Logger;
}

/** A request that needs a browser where none can run is refused (HTTP 400) before anything is fetched. */
export function checkBrowser(deps: Pick<ScrapeDeps, "renderer" | "renderMode">, options: ScrapeOptions): void {
  const needs = browserOption(options);
  if (!needs) return;
  if ((deps.renderMode ?? "never") === "never") throw invalidField([needs], `${needs} needs a browser, and this server runs with RENDER=never`);
  const status = deps.renderer?.status();
  if (!status?.available) throw invalidField([needs], `${needs} needs a browser, and none is available on this server: ${status?.reason ?? "no renderer"}`);
}

const defaultExtractor = rulesProvider(parseHtml);

/** A page fetched before, or a place to keep the page once fetched (a POST /v2/extract job, so that it resumes without fetching again). */
export interface FetchedBefore {
  /** the page as fetched (or rendered) before: converted again, not fetched */
  fetched?: FetchedPage;
  /** called with the page once fetched, before it is converted */
  onFetched?: (page: FetchedPage) => Promise<void>;
}

/**
 * One page as a document. A page answered with an HTTP error status is still a document (its content, with
 * `metadata.statusCode` and `metadata.error`), as the caller asked for that page; transport failures throw PageError.
 */
export async function scrapePage(
  deps: ScrapeDeps,
  url: string,
  options: ScrapeOptions,
  timeoutMs: number,
  before: FetchedBefore = {},
): Promise<Converted> {
  checkBrowser(deps, options);
  let fetched = before.fetched;
  if (!fetched) {
    fetched = await obtain(deps, url, options, timeoutMs);
    await before.onFetched?.(fetched);
  }
  const converted = await deps.convert(fetched, options);
  markHttpError(converted, fetched.statusCode);
  addLockdownCredits(converted, options);
  if (wantsExtraction(options.formats)) {
    // the same step as the extract-json stage of a crawl
    const { document } = converted;
    const input = { url: fetched.finalUrl, html: fetched.body, markdown: document.markdown ?? converted.extractMarkdown ?? "" };
    const spec = extractSpec(options);
    // the rules result the convert worker computed from the tree it parsed, when it did: no second parse
    const provider = precomputedRules(deps.extractor ?? defaultExtractor, converted.analysis as RulesResult | undefined);
    await extractInto(document, input, spec, provider, deps.log ?? createLogger("silent", {}));
    converted.credits = extractionCredits(converted.credits, spec);
    document.metadata.creditsUsed = converted.credits;
    delete converted.extractMarkdown;
    delete converted.analysis;
  }
  return converted;
}

export interface StoredScrapeDeps extends ScrapeDeps {
  store: CrawlStore;
  clock: Clock;
  /** SCREENSHOTS=url: where screenshots are stored (absent: data URLs in the document) */
  screenshots?: ScreenshotStore;
  /** the changeTracking format's page history (absent: no change tracking) */
  snapshots?: SnapshotStore;
}

/**
 * POST /v2/scrape: one page as a document, stored so that GET /v2/scrape/:id serves it for the retention time.
 * `screenshotBase` (the API's scheme://host): its screenshots are stored and served from there.
 */
export async function scrapeAndStore(deps: StoredScrapeDeps, teamId: string, url: string, options: ScrapeOptions, timeoutMs: number, screenshotBase?: string): Promise<Converted> {
  const converted = await scrapePage(deps, url, options, timeoutMs);
  if (options.lockdown) return converted; // lockdown is zero data retention: the result is not kept (GET /v2/scrape/:id answers 404)
  const scrapeId = String(converted.document.metadata.scrapeId);
  if (deps.screenshots && screenshotBase) {
    type Shots = { screenshot?: string; actions?: { screenshots: string[] } };
    const published = await publishScreenshots(converted.document as Shots, { store: deps.screenshots, jobId: scrapeJobId(teamId, scrapeId), publicJobId: scrapeId, base: screenshotBase, now: deps.clock.now() });
    converted.document = published as typeof converted.document;
  }
  const { document, credits } = converted;
  if (options.changeTracking && deps.snapshots) await trackScrape(deps.snapshots, teamId, scrapeJobId(teamId, scrapeId), document, credits, options, deps.clock.now());
  await deps.store.insertDocuments([{
    crawlId: scrapeJobId(teamId, scrapeId), seq: 0, urlKey: scrapeId, finalKey: scrapeId, scrapeId, url: String(document.metadata.url),
    statusCode: Number(document.metadata.statusCode), credits, storedAt: deps.clock.now(), doc: JSON.stringify(document),
  }]);
  return converted;
}

/**
 * A team's stored scrape as JSON text, or undefined when there is none (unknown, another team's, or stored more than
 * the retention before `now`: expired at that instant, whenever the sweep removes it).
 */
export async function readScrape(store: CrawlStore, teamId: string, scrapeId: string, now: number): Promise<string | undefined> {
  return store.scrapeDocument(scrapeJobId(teamId, scrapeId), now - RETENTION_MS);
}

/** The page as the static fetcher or the browser produced it (RENDER and the rule of needs-render.ts). */
async function obtain(deps: ScrapeDeps, url: string, options: ScrapeOptions, timeoutMs: number): Promise<FetchedPage> {
  const scrapeId = randomUUID();
  const { renderer } = deps;
  const rendered = async (document?: Parameters<typeof renderRequest>[3]): Promise<FetchedPage> => {
    const { refused: _refused, ...page } = await (renderer as Renderer).render(renderRequest(url, options, timeoutMs, document));
    return { ...page, scrapeId, engine: "chromium" };
  };
  if (renderer && browserOption(options)) return rendered();
  const fetch = () => deps.fetcher.fetch({ url, timeoutMs, headers: options.headers, errorPages: true });
  // without a page cache, a plain request is fetched and a cache-only one (minAge, lockdown) is a miss
  const cache = deps.cache ?? { cacheMaxAgeMs: 0, now: Date.now, log: deps.log ?? createLogger("silent", {}) };
  const req = { url, headers: options.headers, maxAgeMs: options.maxAgeMs, storeInCache: options.storeInCache, minAgeMs: options.minAgeMs, lockdown: options.lockdown };
  const { result: fetched, cacheState, cachedAt } = await cachedFetch(cache, req, fetch);
  const staticPage: FetchedPage = { ...fetched, scrapeId, engine: "fetch", ...(cacheState ? { cacheState } : {}), ...(cachedAt !== undefined ? { cachedAt } : {}) };
  // fastMode: never the browser; a cache-only page neither (rendering would load the page's scripts and images)
  const mode = options.fastMode || cacheOnly(req) ? "never" : (deps.renderMode ?? "never");
  if (mode === "never" || !/html/i.test(fetched.contentType) || fetched.statusCode >= 400) return staticPage;
  const why = mode === "always" ? "RENDER=always" : scriptBuilt(fetched.body);
  if (!why) return staticPage;
  const status = renderer?.status();
  if (!renderer || !status?.available) return { ...staticPage, warning: `This page looks built by scripts (${why}), but no browser is available here: the static HTML was used.` };
  const document = { finalUrl: fetched.finalUrl, statusCode: fetched.statusCode, contentType: fetched.contentType, body: fetched.body };
  try {
    return await rendered(document);
  } catch (err) {
    if (errorCode(err) === "SCRAPE_PRIVATE_TARGET_REFUSED") throw err;
    return { ...staticPage, warning: `Rendering this script-built page failed (${errorMessage(err)}): the static HTML was used.` };
  }
}

/** The changeTracking of a single scrape: compared with the page's last snapshot in the team's history, which it then replaces. */
async function trackScrape(snapshots: SnapshotStore, teamId: string, jobId: string, document: Converted["document"], credits: number, options: ScrapeOptions, now: number): Promise<void> {
  const urlKey = crawlUrlKey(String(document.metadata.sourceURL ?? document.metadata.url), {});
  const freshness = baseFreshness({ url: String(document.metadata.sourceURL), urlKey, options: { ...options, limit: 1, crawlEntireDomain: false, allowSubdomains: false } as CrawlOptions });
  if (!freshness) return;
  const previous = (await snapshots.latest(teamId, freshness.tag, [urlKey])).get(urlKey) ?? null;
  const page: CrawlPage = { crawlId: jobId, teamId, urlKey, credits, document };
  await snapshots.put([trackChanges(page, freshness, previous, now)]);
}
