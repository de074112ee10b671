// The fetch -> convert -> document use case for one page, shared by POST /v2/scrape and the CLI (`trawl scrape`).
// The crawl stages run the same parts (Fetcher.fetch in fetch-render, the Converter in convert).
import { randomUUID } from "node:crypto";
import { markHttpError, wantsExtraction, type Converted } from "../convert/document.ts";
import { parseHtml } from "../convert/parse-html.ts";
import { extractInto } from "../extract-json/extract-page.ts";
import { JSON_FORMAT_CREDITS } from "../extract-json/extract-json.ts";
import type { JsonProvider } from "../extract-json/provider.ts";
import { rulesProvider } from "../extract-json/rules.ts";
import { createLogger, type Logger } from "../runtime/logger.ts";
import type { ConvertOptions, Converter } from "../convert/converter.ts";
import type { Fetcher } from "../fetch-render/fetcher.ts";
import { cachedFetch, type CacheDeps } from "../fetch-render/cached-fetch.ts";
import type { Clock } from "../runtime/clock.ts";
import { scrapeJobId } from "../runtime/constants.ts";
import type { CrawlStore } from "../store/crawl-store.ts";

/** What one page's scrape takes: conversion options plus request headers and the page cache settings. */
export type ScrapeOptions = ConvertOptions & { json?: { schema?: Record<string, unknown>; prompt?: string }; headers?: Record<string, string>; maxAgeMs?: number; storeInCache?: boolean };

export interface ScrapeDeps {
  fetcher: Fetcher;
  convert: Converter;
  /** maxAge / storeInCache (absent: no page cache) */
  cache?: CacheDeps;
  /** json / summary formats (absent: the rules provider) */
  extractor?: JsonProvider;
  log?: Logger;
}

const defaultExtractor = rulesProvider(parseHtml);

/**
 * One page as a document. A page answered with an HTTP error status is still a document (its content, with
 * `metadata.statusCode` and `metadata.error`), as the caller asked for that page; transport failures throw PageError.
 */
export async function scrapePage(
  deps: ScrapeDeps,
  url: string,
  options: ScrapeOptions,
  timeoutMs: number,
): Promise<Converted> {
  const fetch = () => deps.fetcher.fetch({ url, timeoutMs, headers: options.headers, errorPages: true });
  const { result: fetched, cacheState, cachedAt } = deps.cache
    ? await cachedFetch(deps.cache, { url, headers: options.headers, maxAgeMs: options.maxAgeMs, storeInCache: options.storeInCache }, fetch)
    : { result: await fetch(), cacheState: undefined, cachedAt: undefined };
  const converted = await deps.convert({ ...fetched, scrapeId: randomUUID(), ...(cacheState ? { cacheState } : {}), ...(cachedAt !== undefined ? { cachedAt } : {}) }, options);
  markHttpError(converted, fetched.statusCode);
  if (wantsExtraction(options.formats)) {
    // the same step as the extract-json stage of a crawl
    const { document } = converted;
    const input = { url: fetched.finalUrl, html: fetched.body, markdown: document.markdown ?? converted.extractMarkdown ?? "" };
    const json = options.formats.includes("json") ? { json: options.json ?? {} } : {};
    await extractInto(document, input, { ...json, ...(options.formats.includes("summary") ? { summary: true } : {}) }, deps.extractor ?? defaultExtractor, deps.log ?? createLogger("silent", {}));
    if (options.formats.includes("json")) converted.credits = Math.max(converted.credits, JSON_FORMAT_CREDITS);
    document.metadata.creditsUsed = converted.credits;
    delete converted.extractMarkdown;
  }
  return converted;
}

export interface StoredScrapeDeps extends ScrapeDeps {
  store: CrawlStore;
  clock: Clock;
}

/** POST /v2/scrape: one page as a document, stored so that GET /v2/scrape/:id serves it for the retention time. */
export async function scrapeAndStore(deps: StoredScrapeDeps, teamId: string, url: string, options: ScrapeOptions, timeoutMs: number): Promise<Converted> {
  const converted = await scrapePage(deps, url, options, timeoutMs);
  const { document, credits } = converted;
  const scrapeId = String(document.metadata.scrapeId);
  await deps.store.insertDocuments([{
    crawlId: scrapeJobId(teamId, scrapeId), seq: 0, urlKey: scrapeId, finalKey: scrapeId, scrapeId, url: String(document.metadata.url),
    statusCode: Number(document.metadata.statusCode), credits, storedAt: deps.clock.now(), doc: JSON.stringify(document),
  }]);
  return converted;
}

/** A team's stored scrape as JSON text, or undefined when there is none (unknown, another team's, or expired and swept). */
export async function readScrape(store: CrawlStore, teamId: string, scrapeId: string): Promise<string | undefined> {
  const page = await store.pageDocuments(scrapeJobId(teamId, scrapeId), 0, Number.MAX_SAFE_INTEGER, 1);
  return page.docs[0];
}
