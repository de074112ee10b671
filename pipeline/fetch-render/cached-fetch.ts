// maxAge / storeInCache around one fetch, shared by the fetch-render stage and the single-page scrape:
// a cached response no older than maxAge is used instead of fetching; a fresh successful response is stored
// (unless storeInCache is false). The cache never fails a page: a read error is a miss, writes are best effort.
import type { Logger } from "../runtime/logger.ts";
import { errorMessage } from "../runtime/errors.ts";
import { pageCacheKey, type PageCache } from "../store/page-cache.ts";
import type { FetchResult } from "./fetcher.ts";

export interface CacheDeps {
  cache?: PageCache;
  /** how long the cache keeps responses (CACHE_MAX_AGE_MS); 0: no cache */
  cacheMaxAgeMs: number;
  now: () => number;
  log: Logger;
}

export interface CacheRequest {
  url: string;
  headers?: Record<string, string>;
  maxAgeMs?: number;
  storeInCache?: boolean;
}

export async function cachedFetch(
  deps: CacheDeps,
  req: CacheRequest,
  fetch: () => Promise<FetchResult>,
): Promise<{ result: FetchResult; cacheState?: "hit" | "miss"; cachedAt?: number }> {
  const { cache } = deps;
  if (!cache || deps.cacheMaxAgeMs <= 0) return { result: await fetch() };
  const key = pageCacheKey(req.url, req.headers);
  const maxAge = Math.min(req.maxAgeMs ?? 0, deps.cacheMaxAgeMs);
  if (maxAge > 0) {
    const hit = await cache.get(key, deps.now() - maxAge).catch((err: unknown) => {
      deps.log.warn({ err: errorMessage(err), url: req.url }, "page cache read failed; fetching");
      return null;
    });
    if (hit) {
      const bytes = hit.bodyBase64 === undefined ? undefined : Buffer.from(hit.bodyBase64, "base64");
      const result: FetchResult = { url: req.url, finalUrl: hit.finalUrl, statusCode: hit.statusCode, contentType: hit.contentType, body: hit.body, ...(bytes ? { bytes } : {}) };
      return { result, cacheState: "hit", cachedAt: hit.storedAt };
    }
  }
  const result = await fetch();
  if (req.storeInCache !== false && result.statusCode < 400 && result.statusCode !== 304) {
    const pdf = result.contentType === "application/pdf" && result.bytes;
    cache.put([{
      key, url: req.url, finalUrl: result.finalUrl, statusCode: result.statusCode, contentType: result.contentType,
      body: pdf ? "" : result.body, ...(pdf ? { bodyBase64: (result.bytes as Buffer).toString("base64") } : {}), storedAt: deps.now(),
    }]);
  }
  return { result, ...(maxAge > 0 ? { cacheState: "miss" as const } : {}) };
}
