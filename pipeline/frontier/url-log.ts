// What the frontier remembers of the URLs it did not crawl, so that every URL a crawl saw has a reason (url-reason.ts).
// Pure. Bounded per crawl: at most `max` skipped URLs are listed (a row each, and an entry in memory); past that they
// are only counted. A skipped URL that a later link admits (a shallower page, a freed `limit` slot) becomes queued: its
// row is superseded (a higher version) and its count moves.
import type { CrawlOptions } from "../../schemas/index.ts";
import type { UrlRow } from "../store/crawl-store.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import type { ReasonCounts, UrlReason } from "../store/url-reason.ts";
import { RACED_REDIRECT } from "../store/url-reason.ts";
import { scopeRule } from "../url/scope.ts";

/** Skipped URLs listed per crawl by default (CRAWL_URL_LOG_MAX). */
export const URL_LOG_MAX = 10_000;

export interface UrlLog {
  /** listed skipped URLs: key (or `=<url>` for a duplicate spelling) -> reason */
  skipped: Map<string, UrlReason>;
  /** skipped URLs by reason, listed or not */
  counts: ReasonCounts;
  /** skipped URLs past the bound (counted, not listed; one found twice counts twice) */
  unlisted: number;
  /**
   * The URL each of the first `max` queued keys was queued as and the page it was found on: a duplicate spelling is
   * told by it, and the rows of its later states carry both (ClickHouse's ReplacingMergeTree keeps only a key's latest
   * row, so that row must say everything).
   */
  originals: Map<string, { url: string; from: string }>;
  /** failed URLs that were a redirect to a page already stored (counted as duplicates, not failures) */
  raced: number;
}

export const newUrlLog = (): UrlLog => ({ skipped: new Map(), counts: {}, unlisted: 0, originals: new Map(), raced: 0 });

export interface Skip {
  reason: UrlReason;
  detail: string;
}

export interface Found {
  crawlId: string;
  key: string;
  url: string;
  depth: number;
  from: string;
  version: number;
}

/** Why a discovered link in scope is not followed before looking at it: sitemap=only, maxDiscoveryDepth. Null: it may be. */
export function linkSkip(o: CrawlOptions, fromSitemap: boolean, depth: number): Skip | null {
  if (!fromSitemap && o.sitemap === "only") return { reason: "not_followed", detail: 'sitemap is "only": links on pages are not followed' };
  if (fromSitemap && o.maxDiscoveryDepth === 0) return { reason: "too_deep", detail: "found in the sitemap; maxDiscoveryDepth 0 crawls the start URL only" };
  if (o.maxDiscoveryDepth !== undefined && depth > o.maxDiscoveryDepth) return { reason: "too_deep", detail: `depth ${depth} is beyond maxDiscoveryDepth ${o.maxDiscoveryDepth}` };
  return null;
}

/** The scope verdict of a link as a reason (excludePaths: excluded; any other rule: out_of_scope). Null: in scope. */
export function scopeSkip(start: string, url: string, o: CrawlOptions, from: string): Skip | null {
  const { verdict, rule } = scopeRule(start, url, o, from);
  if (verdict === "ok") return null;
  return { reason: verdict === "excluded" ? "excluded" : "out_of_scope", detail: verdict === "excluded" ? rule : `${verdict}: ${rule}` };
}

/** Records a skipped URL (the first reason found for it is kept). */
export function noteSkip(log: UrlLog, rows: UrlRow[], f: Found, skip: Skip, max: number): void {
  const was = log.skipped.get(f.key);
  // found again within maxDiscoveryDepth while `limit` is full: over the limit, not too deep
  if (was === "too_deep" && skip.reason === "over_limit") {
    log.skipped.delete(f.key);
    log.counts.too_deep = Math.max(0, (log.counts.too_deep ?? 0) - 1);
  } else if (was !== undefined) return;
  log.counts[skip.reason] = (log.counts[skip.reason] ?? 0) + 1;
  if (log.skipped.size >= max) {
    log.unlisted++;
    return;
  }
  log.skipped.set(f.key, skip.reason);
  rows.push({ crawlId: f.crawlId, urlKey: f.key, url: f.url, depth: f.depth, state: URL_STATE.skipped, version: f.version, reason: skip.reason, detail: skip.detail, from: f.from });
}

/** A link to a key already queued or crawled: a row when it is spelled otherwise than the URL that was queued. */
export function noteDuplicate(log: UrlLog, rows: UrlRow[], f: Found, max: number): void {
  const original = log.originals.get(f.key)?.url;
  if (original === undefined || original === f.url) return;
  noteSkip(log, rows, { ...f, key: `=${f.url}` }, { reason: "duplicate", detail: original }, max);
}

/** A URL queued: no longer skipped (if it was), and remembered as its key's spelling. */
export function noteQueued(log: UrlLog, key: string, url: string, from: string, max: number): void {
  const was = log.skipped.get(key);
  if (was !== undefined) {
    log.skipped.delete(key);
    log.counts[was] = Math.max(0, (log.counts[was] ?? 0) - 1);
  }
  if (log.originals.size < max && !log.originals.has(key)) log.originals.set(key, { url, from });
}

/** The reason and detail of a failed URL's row. */
export function failureReason(code: string, error: string, robots: boolean, duplicateOf: string | undefined): Skip {
  if (robots) return { reason: "robots_blocked", detail: error };
  if (code === RACED_REDIRECT) return { reason: "duplicate", detail: duplicateOf ?? error };
  return { reason: "failed", detail: `${code}: ${error}` };
}

/** The crawl's URLs by reason, for its record. */
export function reasonCounts(log: UrlLog, s: { queued: number; done: number; failed: number; blocked: number }): ReasonCounts {
  const all: ReasonCounts = { ...log.counts, queued: s.queued, fetched: s.done, failed: s.failed - log.raced, robots_blocked: s.blocked };
  all.duplicate = (all.duplicate ?? 0) + log.raced;
  return Object.fromEntries(Object.entries(all).filter(([, n]) => n > 0));
}

/** Rebuilds the log after a restart: listed rows from the store, counts from the record (older records: the rows). */
export function restoreUrlLog(rows: UrlRow[], counts: ReasonCounts | undefined, max: number): UrlLog {
  const log = newUrlLog();
  for (const r of rows) {
    if (r.state === URL_STATE.skipped && r.reason) {
      log.skipped.set(r.urlKey, r.reason);
      if (!counts) log.counts[r.reason] = (log.counts[r.reason] ?? 0) + 1;
    } else {
      if (r.state === URL_STATE.failed && r.reason === "duplicate") log.raced++;
      if (r.url && log.originals.size < max) log.originals.set(r.urlKey, { url: r.url, from: r.from ?? "" });
    }
  }
  if (counts) {
    for (const [reason, n] of Object.entries(counts) as [UrlReason, number][]) {
      if (!["queued", "fetched", "failed", "robots_blocked"].includes(reason)) log.counts[reason] = n;
    }
    log.counts.duplicate = Math.max(0, (log.counts.duplicate ?? 0) - log.raced);
    if (!log.counts.duplicate) delete log.counts.duplicate;
    const listed = log.skipped.size;
    const total = Object.values(log.counts).reduce((a, b) => a + b, 0);
    log.unlisted = Math.max(0, total - listed);
  }
  return log;
}
