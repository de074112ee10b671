// Every error Trawl raises on purpose, with a stable code, a retriable flag and a cause.
// One classifier decides what happens to a failure: retry, page failure (data), dead letter, or crash.

export type ErrorCode =
  // page-level failures: data, recorded against the URL
  | "SCRAPE_TIMEOUT"
  | "SCRAPE_DNS_RESOLUTION_ERROR"
  | "SCRAPE_CONNECTION_ERROR"
  | "SCRAPE_SSL_ERROR"
  | "SCRAPE_SITE_ERROR"
  | "SCRAPE_HTTP_STATUS"
  | "SCRAPE_TOO_LARGE"
  | "SCRAPE_UNSUPPORTED_FILE_ERROR"
  | "SCRAPE_PRIVATE_TARGET_REFUSED"
  | "SCRAPE_TOO_MANY_REDIRECTS"
  // a 304 Not Modified to a request that carried no validators (If-None-Match, If-Modified-Since): nothing to reuse
  | "SCRAPE_UNEXPECTED_NOT_MODIFIED"
  | "SCRAPE_REDIRECT_OUT_OF_SCOPE"
  | "SCRAPE_CANCELLED"
  | "SCRAPE_UNPARSEABLE"
  | "SCRAPE_CONVERT_TIMEOUT"
  // the page's conversion needed more heap than a convert worker has (CONVERT_WORKER_HEAP_MB)
  | "SCRAPE_CONVERT_OUT_OF_MEMORY"
  | "SCRAPE_RACED_REDIRECT"
  | "SCRAPE_RETRY_AFTER_TOO_LONG"
  | "SCRAPE_ACTION_ERROR"
  | "SCRAPE_BROWSER_UNAVAILABLE"
  | "SCRAPE_BROWSER_CRASHED"
  // Trawl's handling of one of the page's browser events failed (a route or event callback): that page fails, not the process
  | "SCRAPE_BROWSER_ERROR"
  // cache-only scrapes (minAge, lockdown) that found no cached response: HTTP 404 on /v2/scrape
  | "SCRAPE_NO_CACHED_DATA"
  | "SCRAPE_LOCKDOWN_CACHE_MISS"
  | "ROBOTS_BLOCKED"
  // crawl warnings (error rows that are not a page's failure)
  | "SITEMAP_TOO_LARGE"
  // a synchronous request (map, search) that ran out of its time limit
  | "MAP_TIMEOUT"
  | "SEARCH_TIMEOUT"
  | "SEARCH_BACKEND_ERROR"
  // extraction (json / summary formats): the page is still stored, with the error in its metadata
  | "EXTRACT_FAILED"
  | "LLM_TIMEOUT"
  | "LLM_HTTP_ERROR"
  | "LLM_BAD_OUTPUT"
  // a request that cannot be served as given (HTTP 400 in the API, exit status 2 in the CLI)
  | "BAD_REQUEST"
  | "INSUFFICIENT_CREDITS"
  // infrastructure
  | "STORE_UNAVAILABLE"
  | "STORE_TLS_UNTRUSTED"
  | "STORE_AUTH_REFUSED"
  | "BUS_UNAVAILABLE"
  | "SCHEMA_REGISTRY_UNAVAILABLE"
  | "SCHEMA_REJECTED"
  // a start that could not reach a server within INFRA_START_WAIT_S (the message names the variable)
  | "INFRA_UNREACHABLE"
  // a long job (POST /v2/extract) left unfinished because its process is stopping: it runs again elsewhere
  | "JOB_INTERRUPTED"
  // a webhook event that waited for its endpoint when the process began to stop: delivered after the restart
  | "DELIVERY_INTERRUPTED"
  // a fetch task that waited for its host's turn when the process began to stop: fetched after the restart
  | "FETCH_INTERRUPTED"
  // messages that can never be processed
  | "MESSAGE_UNDECODABLE"
  | "MESSAGE_INVALID"
  | "CONFIG_INVALID"
  | "BUG";

/** The error code of a URL that robots.txt disallows (an error row, not a failure shown to the caller). */
export const ROBOTS_BLOCKED: ErrorCode = "ROBOTS_BLOCKED";

export class TrawlError extends Error {
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly statusCode: number | undefined;

  constructor(code: ErrorCode, message: string, opts: { retriable?: boolean; cause?: unknown; statusCode?: number } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "TrawlError";
    this.code = code;
    this.retriable = opts.retriable ?? false;
    this.statusCode = opts.statusCode;
  }
}

/** A failure of one page: becomes PageFailed and an error record; the offset moves on. */
export class PageError extends TrawlError {
  /** The server asked to wait this long before trying again (Retry-After). */
  readonly retryAfterMs: number | undefined;
  constructor(code: ErrorCode, message: string, opts: { retriable?: boolean; cause?: unknown; statusCode?: number; retryAfterMs?: number } = {}) {
    super(code, message, opts);
    this.name = "PageError";
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** One problem of a request, at the path of the field it concerns (the anchor's zod-like issue shape). */
export interface RequestIssue {
  code: string;
  path: (string | number)[];
  message: string;
  keys?: string[];
}

/** A request that cannot be served as given: the API answers 400 with the issues, the CLI prints the message. */
export class RequestError extends TrawlError {
  readonly issues: RequestIssue[];
  constructor(message: string, issues: RequestIssue[]) {
    super("BAD_REQUEST", message);
    this.name = "RequestError";
    this.issues = issues;
  }
}

/** A RequestError about one field: `path` is where the field is, `message` says what is wrong with it. */
export const invalidField = (path: (string | number)[], message: string) => new RequestError(message, [{ code: "custom", path, message }]);

/** ClickHouse or Kafka unavailable: back off and retry without committing. */
export class InfrastructureError extends TrawlError {
  constructor(code: "STORE_UNAVAILABLE" | "STORE_TLS_UNTRUSTED" | "STORE_AUTH_REFUSED" | "BUS_UNAVAILABLE" | "SCHEMA_REGISTRY_UNAVAILABLE", message: string, cause?: unknown) {
    super(code, message, { retriable: true, cause });
    this.name = "InfrastructureError";
  }
}

export type Disposition = "retry" | "page-failed" | "dead-letter";

/** The one classifier. TypeErrors and other bugs are never retried: they go to the dead-letter topic. */
export function classify(err: unknown): Disposition {
  if (err instanceof PageError) return "page-failed";
  if (err instanceof TrawlError) return err.retriable ? "retry" : "dead-letter";
  return "dead-letter";
}

export function errorCode(err: unknown): ErrorCode {
  return err instanceof TrawlError ? err.code : "BUG";
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
