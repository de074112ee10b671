// maxAge / storeInCache around one fetch, shared by the fetch-render stage and the single-page scrape:
// a cached response no older than maxAge is used instead of fetching; a fresh successful response is stored
// (unless storeInCache is false). The cache never fails a page: a read error is a miss, writes are best effort.
// minAge and lockdown make it cache-only: the page comes from the cache or the request fails with a miss code, and
// nothing is fetched (a read error then fails the request: there is no fetch to fall back on).
import type { Logger } from "../runtime/logger.ts";
import { errorMessage, PageError } from "../runtime/errors.ts";
import { pageCacheKey, type CachedPage, type PageCache } from "../store/page-cache.ts";
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
  /** minAge: cache-only, the newest cached response when at least this old */
  minAgeMs?: number;
  /** lockdown: cache-only within maxAge, never an outbound request */
  lockdown?: boolean;
}

/** Whether a request is served from the page cache only (minAge, lockdown). */
export const cacheOnly = (req: Pick<CacheRequest, "minAgeMs" | "lockdown">): boolean => req.minAgeMs !== undefined || req.lockdown === true;

/** A cache-only request's miss. The message leaves the URL out (lockdown: "the URL is never logged on miss"). */
function cacheMiss(req: CacheRequest): PageError {
  return req.lockdown === true
    ? new PageError("SCRAPE_LOCKDOWN_CACHE_MISS", "lockdown: no cached response of this page within maxAge, and lockdown makes no outbound request")
    : new PageError("SCRAPE_NO_CACHED_DATA", `minAge: no cached response of this page at least ${req.minAgeMs} ms old`);
}

/** minAge / lockdown: the cached response, or a miss; never a fetch. */
async function fromCacheOnly(deps: CacheDeps, req: CacheRequest): Promise<{ result: FetchResult; cacheState: "hit"; cachedAt: number }> {
  const { cache } = deps;
  if (!cache || deps.cacheMaxAgeMs <= 0) throw cacheMiss(req);
  const now = deps.now();
  // minAge: any age the cache still holds; lockdown: maxAge (2 years unless the request says), capped by the cache
  const maxAge = req.lockdown === true ? Math.min(req.maxAgeMs ?? deps.cacheMaxAgeMs, deps.cacheMaxAgeMs) : deps.cacheMaxAgeMs;
  const hit = await cache.get(pageCacheKey(req.url, req.headers), now - maxAge);
  if (!hit || (req.minAgeMs !== undefined && hit.storedAt > now - req.minAgeMs)) throw cacheMiss(req);
  return { result: cachedResult(req.url, hit), cacheState: "hit", cachedAt: hit.storedAt };
}

function cachedResult(url: string, hit: CachedPage): FetchResult {
  const bytes = hit.bodyBase64 === undefined ? undefined : Buffer.from(hit.bodyBase64, "base64");
  return { url, finalUrl: hit.finalUrl, statusCode: hit.statusCode, contentType: hit.contentType, body: hit.body, ...(bytes ? { bytes } : {}) };
}

export async function cachedFetch(
  deps: CacheDeps,
  req: CacheRequest,
  fetch: () => Promise<FetchResult>,
): Promise<{ result: FetchResult; cacheState?: "hit" | "miss"; cachedAt?: number }> {
  if (cacheOnly(req)) return fromCacheOnly(deps, req);
  const { cache } = deps;
  if (!cache || deps.cacheMaxAgeMs <= 0) return { result: await fetch() };
  const key = pageCacheKey(req.url, req.headers);
  const maxAge = Math.min(req.maxAgeMs ?? 0, deps.cacheMaxAgeMs);
  if (maxAge > 0) {
    const hit = await cache.get(key, deps.now() - maxAge).catch((err: unknown) => {
      deps.log.warn({ err: errorMessage(err), url: req.url }, "page cache read failed; fetching");
      return null;
    });
    if (hit) return { result: cachedResult(req.url, hit), cacheState: "hit", cachedAt: hit.storedAt };
  }
  const result = await fetch();
  if (req.storeInCache !== false && result.statusCode < 400) {
    const pdf = result.contentType === "application/pdf" && result.bytes;
    cache.put([{
      key, url: req.url, finalUrl: result.finalUrl, statusCode: result.statusCode, contentType: result.contentType,
      body: pdf ? "" : result.body, ...(pdf ? { bodyBase64: (result.bytes as Buffer).toString("base64") } : {}), storedAt: deps.now(),
    }]);
  }
  return { result, ...(maxAge > 0 ? { cacheState: "miss" as const } : {}) };
}
