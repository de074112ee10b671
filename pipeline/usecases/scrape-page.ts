// The fetch -> convert -> document use case for one page, shared by POST /v2/scrape and the CLI (`trawl scrape`).
// The crawl stages run the same parts (Fetcher.fetch in fetch-render, the Converter in convert).
import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { Converted } from "../convert/document.ts";
import type { ConvertOptions, Converter } from "../convert/converter.ts";
import type { Fetcher } from "../fetch-render/fetcher.ts";
import { cachedFetch, type CacheDeps } from "../fetch-render/cached-fetch.ts";

export interface ScrapeDeps {
  fetcher: Fetcher;
  convert: Converter;
  /** maxAge / storeInCache (absent: no page cache) */
  cache?: CacheDeps;
}

/**
 * One page as a document. A page answered with an HTTP error status is still a document (its content, with
 * `metadata.statusCode` and `metadata.error`), as the caller asked for that page; transport failures throw PageError.
 */
export async function scrapePage(
  deps: ScrapeDeps,
  url: string,
  options: ConvertOptions & { headers?: Record<string, string>; maxAgeMs?: number; storeInCache?: boolean },
  timeoutMs: number,
): Promise<Converted> {
  const fetch = () => deps.fetcher.fetch({ url, timeoutMs, headers: options.headers, errorPages: true });
  const { result: fetched, cacheState, cachedAt } = deps.cache
    ? await cachedFetch(deps.cache, { url, headers: options.headers, maxAgeMs: options.maxAgeMs, storeInCache: options.storeInCache }, fetch)
    : { result: await fetch(), cacheState: undefined, cachedAt: undefined };
  const converted = await deps.convert({ ...fetched, scrapeId: randomUUID(), ...(cacheState ? { cacheState } : {}), ...(cachedAt !== undefined ? { cachedAt } : {}) }, options);
  if (fetched.statusCode >= 400) {
    converted.document.metadata.error = `HTTP ${fetched.statusCode}${STATUS_CODES[fetched.statusCode] ? ` ${STATUS_CODES[fetched.statusCode]}` : ""}`;
  }
  return converted;
}
