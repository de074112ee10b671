// Why a crawl fetched, skipped or failed a URL: a small closed set of stable codes, each with a detail (the rule, the
// pattern, the URL it duplicates, the error). Written by the frontier with the URL states (frontier_urls / journal),
// read by GET /v2/crawl/:id/urls, its explain route and the CLI's urls.jsonl.

export const URL_REASONS = [
  /** in flight: waiting for its fetch or its conversion */
  "queued",
  /** fetched and stored as a document */
  "fetched",
  /** the fetch or the conversion failed (detail: the error code and message) */
  "failed",
  /** robots.txt disallows it */
  "robots_blocked",
  /** the same page as another URL (detail: that URL): same dedup key, or a redirect to a page already stored */
  "duplicate",
  /** outside the crawl's scope (detail: which rule: another host, not under the start path, a file type, includePaths) */
  "out_of_scope",
  /** matched an excludePaths pattern (detail: the pattern) */
  "excluded",
  /** found beyond maxDiscoveryDepth */
  "too_deep",
  /** found while `limit` was full, and no slot freed up for it */
  "over_limit",
  /** found on a page of a crawl that does not follow page links (sitemap: "only") */
  "not_followed",
  /** still queued when the crawl was cancelled */
  "cancelled",
] as const;

export type UrlReason = (typeof URL_REASONS)[number];

export const isUrlReason = (s: string): s is UrlReason => (URL_REASONS as readonly string[]).includes(s);

/** Counts of a crawl's URLs by reason (reasons with none are left out). */
export type ReasonCounts = Partial<Record<UrlReason, number>>;

/** `from` of a URL found in the sitemaps (not on a page); the start URL has none. */
export const FROM_SITEMAP = "sitemap";

/** The error code of a URL that redirected to a page already stored (the sink's PageFailed). */
export const RACED_REDIRECT = "SCRAPE_RACED_REDIRECT";
