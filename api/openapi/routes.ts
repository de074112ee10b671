// Every HTTP route of the API, one entry each, as the OpenAPI document describes it. Request bodies are schemas of
// schemas/; response bodies are the $defs of schemas/api-bodies.schema.json (or any schemas/ file).
// Adding a route: register it on a Koa router under api/routes/, add one entry here (paths in Koa's `:param` form),
// and add its response body to api-bodies.schema.json if it is new. A unit test fails until the two agree.
import type { SchemaName } from "../../schemas/index.ts";
import { URL_REASONS } from "../../pipeline/store/url-reason.ts";

/** A response body: `api-bodies#Name` (a $defs entry), a schemas/ file name, HTML, or an image (PNG or JPEG). */
export type BodyRef = `api-bodies#${string}` | SchemaName | "html" | "image" | "warc" | "cdxj";

export interface RouteDoc {
  method: "get" | "post" | "patch" | "delete";
  /** Koa form: `/v2/crawl/:id` */
  path: string;
  summary: string;
  tag: "crawl" | "scrape" | "batch" | "extract" | "map" | "search" | "team" | "meta" | "admin" | "monitor";
  /** JSON request body: a schema of schemas/ (validated against it), or a $defs entry of api-bodies.schema.json */
  body?: SchemaName | `api-bodies#${string}`;
  /** multipart/form-data request body (an upload): a binary `file` part and an `options` part, JSON of this schema */
  upload?: { options: SchemaName };
  /** a valid body, shown in the document (and tried first by fuzzers, so that linked operations get real ids) */
  example?: Record<string, unknown>;
  /** path parameters that are not plain strings */
  params?: Record<string, { type: "string"; format?: string; description?: string }>;
  query?: Record<string, { type: "integer" | "string"; minimum?: number; maximum?: number; enum?: string[]; format?: string; pattern?: string; required?: boolean; description: string }>;
  responses: Partial<Record<200 | 206 | 416 | 400 | 401 | 402 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 429 | 500 | 503, Answer>>;
}

export interface Answer {
  description: string;
  body: BodyRef;
  /** OpenAPI links: operations (`METHOD /koa/path`) that take a value of this answer, e.g. `{ id: "$response.body#/id" }` */
  links?: Record<string, { operation: string; parameters: Record<string, string> }>;
}

const error = (description: string) => ({ description, body: "api-bodies#ErrorResponse" as const });
const uuid = { id: { type: "string" as const, format: "uuid", description: "the job id" } };
/** Failures every route can answer with: a dependency down (ClickHouse, Kafka) is 503, a bug 500. */
const SERVER = { 500: error("unexpected error (a bug), with an exception id"), 503: error("a dependency (store, bus) is unavailable; retry") };
/** With USE_DB_AUTHENTICATION=true every /v2 route needs a bearer key and is rate limited per key. */
const AUTH = { 401: error("no or unknown API key (USE_DB_AUTHENTICATION=true)"), 429: error("rate limit of the key exceeded (`Retry-After`)") };
/** ... and a submit needs credits left. */
const CREDITS = { ...AUTH, 402: error("the team has no credits left") };
const BODY = { 400: error("invalid body (`code: BAD_REQUEST` with details) or malformed JSON (`BAD_REQUEST_INVALID_JSON`)"), 413: error("body larger than 10 MB") };

export const routeDocs: RouteDoc[] = [
  {
    method: "post", path: "/v2/crawl", tag: "crawl", summary: "Submit a crawl", body: "crawl-request",
    example: { url: "https://example.com/docs/", limit: 10, scrapeOptions: { formats: ["markdown"] } },
    responses: {
      200: {
        description: "accepted", body: "api-bodies#CrawlStarted",
        links: Object.fromEntries(["GET /v2/crawl/:id", "DELETE /v2/crawl/:id", "GET /v2/crawl/:id/errors", "GET /v2/crawl/:id/urls", "GET /v2/crawl/:id/urls/explain"].map((op) => [op.replace(/\W+/g, "_"), { operation: op, parameters: { id: "$response.body#/id" } }])),
      },
      ...BODY, ...CREDITS, ...SERVER,
    },
  },
  {
    method: "get", path: "/v2/crawl/:id", tag: "crawl", summary: "Status and documents of a crawl (paged)", params: uuid,
    query: {
      skip: { type: "integer", minimum: 0, description: "first document (seq) of the chunk" },
      limit: { type: "integer", minimum: 1, maximum: 1000, description: "documents in the chunk" },
    },
    responses: { 200: { description: "status and a chunk of at most 10 MB of documents", body: "api-bodies#CrawlStatus" }, 400: error("invalid id or pagination"), 404: error("unknown or expired crawl"), ...AUTH, ...SERVER },
  },
  {
    method: "delete", path: "/v2/crawl/:id", tag: "crawl", summary: "Cancel a crawl", params: uuid,
    responses: { 200: { description: "cancelled", body: "api-bodies#CrawlCancelled" }, 400: error("invalid id"), 404: error("unknown crawl"), 409: error("the crawl already ended"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/crawl/:id/errors", tag: "crawl", summary: "Pages of a crawl that failed, and URLs blocked by robots.txt", params: uuid,
    responses: { 200: { description: "errors", body: "api-bodies#CrawlErrors" }, 400: error("invalid id"), 404: error("unknown crawl"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/crawl/:id/urls", tag: "crawl", summary: "Every URL a crawl saw, with its state and reason (paged)", params: uuid,
    query: {
      status: { type: "string", enum: ["queued", "fetched", "failed", "blocked", "skipped"], description: "only URLs in this state" },
      reason: { type: "string", enum: [...URL_REASONS], description: "only URLs with this reason" },
      skip: { type: "integer", minimum: 0, description: "first URL of the page (URLs are ordered by depth, then URL)" },
      limit: { type: "integer", minimum: 1, maximum: 1000, description: "URLs in the page (default 100)" },
    },
    responses: { 200: { description: "a page of URLs, the counts by reason, and `next` when more match", body: "api-bodies#CrawlUrls" }, 400: error("invalid id, filter or pagination"), 404: error("unknown or expired crawl"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/crawl/:id/urls/explain", tag: "crawl", summary: "Why a crawl fetched, skipped or never reached one URL", params: uuid,
    query: { url: { type: "string", format: "uri", pattern: "^https?://[a-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?$", required: true, description: "the URL to explain (absolute http or https)" } },
    responses: { 200: { description: "the URL's state, reason and a sentence", body: "api-bodies#CrawlUrlExplanation" }, 400: error("invalid id or url"), 404: error("unknown or expired crawl"), ...AUTH, ...SERVER },
  },
  { method: "get", path: "/v2/crawl/active", tag: "crawl", summary: "Running crawls of the team", responses: { 200: { description: "running crawls", body: "api-bodies#ActiveCrawls" }, ...AUTH, ...SERVER } },
  { method: "get", path: "/v2/crawl/ongoing", tag: "crawl", summary: "Running crawls of the team (alias of /v2/crawl/active)", responses: { 200: { description: "running crawls", body: "api-bodies#ActiveCrawls" }, ...AUTH, ...SERVER } },
  {
    method: "post", path: "/v2/scrape", tag: "scrape", summary: "Scrape one page, synchronously", body: "scrape-request",
    example: { url: "https://example.com/", formats: ["markdown", "links"] },
    responses: {
      200: { description: "the page's document", body: "api-bodies#ScrapeResult", links: { again: { operation: "GET /v2/scrape/:id", parameters: { id: "$response.body#/data/metadata/scrapeId" } } } },
      ...BODY,
      ...CREDITS,
      404: error("a cache-only scrape found no cached response: `minAge` (`SCRAPE_NO_CACHED_DATA`), `lockdown` (`SCRAPE_LOCKDOWN_CACHE_MISS`)"),
      408: error("the page took longer than `timeout` (`SCRAPE_TIMEOUT`)"),
      500: error("the page could not be fetched or converted (`SCRAPE_*` codes, as Firecrawl answers), or a bug"),
      503: SERVER[503],
    },
  },
  {
    method: "post", path: "/v2/parse", tag: "scrape", summary: "Convert an uploaded file (PDF, DOCX, HTML) as a scrape would convert the page", upload: { options: "scrape-options" },
    responses: {
      200: { description: "the file's document (`metadata.sourceFile` names it)", body: "api-bodies#ScrapeResult" },
      400: error("no file part, options that are not JSON or not scrape options (`BAD_REQUEST`), options a file cannot have (`PARSE_UNSUPPORTED_OPTIONS`), or a file that cannot be read as its kind"),
      413: error("the upload is larger than PARSE_MAX_BYTES, or its conversion needed more than a convert worker's heap (`SCRAPE_CONVERT_OUT_OF_MEMORY`, CONVERT_WORKER_HEAP_MB)"),
      415: error("not multipart/form-data, or a kind of file this server does not convert (`SCRAPE_UNSUPPORTED_FILE_ERROR`)"),
      ...CREDITS,
      408: error("the upload was not received whole within PARSE_READ_TIMEOUT_MS (`UPLOAD_TIMEOUT`), or its conversion took longer than its time limit"),
      ...SERVER,
      503: error("this process already holds PARSE_MAX_CONCURRENT uploads (`PARSE_BUSY`, `Retry-After`), or a dependency (store, bus) is unavailable; retry"),
    },
  },
  {
    method: "get", path: "/v2/scrape/:id", tag: "scrape", summary: "A scraped page again", params: uuid,
    responses: { 200: { description: "the document", body: "api-bodies#ScrapeResult" }, 400: error("invalid id"), 404: error("unknown scrape"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/screenshots/:id/:file", tag: "scrape", summary: "A stored screenshot (SCREENSHOTS=url) of a crawl, batch or scrape, to its team",
    params: { ...uuid, file: { type: "string", description: "`<screenshot id>.png` or `.jpeg`, as in document.screenshot" } },
    responses: { 200: { description: "the image", body: "image" }, 400: error("invalid job id"), 404: error("unknown, another team's, or expired"), ...AUTH, ...SERVER },
  },
  ...["/v2/crawl", "/v2/batch/scrape"].flatMap((base): RouteDoc[] => {
    const tag = base === "/v2/crawl" ? "crawl" as const : "batch" as const;
    const missing = error("unknown or another team's job, a job without web archives, or archives past WARC_RETENTION_HOURS");
    return [
      {
        method: "get", path: `${base}/:id/warc`, tag, summary: "The job's web archives (WARC 1.1 files; a Trawl extension: submit with `warc: true`)", params: uuid,
        responses: { 200: { description: "the files", body: "api-bodies#WarcFiles" }, 400: error("invalid job id"), 404: missing, ...AUTH, ...SERVER },
      },
      {
        method: "get", path: `${base}/:id/warc/:name`, tag, summary: "One WARC file (gzip per record); Range requests read one record by its CDXJ offset and length",
        params: { ...uuid, name: { type: "string", description: "a file name of GET …/warc" } },
        responses: {
          200: { description: "the file", body: "warc" }, 206: { description: "the range asked", body: "warc" }, 400: error("invalid job id"), 404: missing,
          416: error("the range is past the end of the file"), ...AUTH, ...SERVER,
        },
      },
      {
        method: "get", path: `${base}/:id/cdxj`, tag, summary: "The job's CDXJ index: `<SURT> <timestamp> <JSON>` per URL (url, mime, status, digest, length, offset, filename), sorted", params: uuid,
        responses: { 200: { description: "the index", body: "cdxj" }, 400: error("invalid job id"), 404: missing, ...AUTH, ...SERVER },
      },
    ];
  }),
  { method: "get", path: "/v2/openapi.json", tag: "meta", summary: "This document", responses: { 200: { description: "OpenAPI 3.1", body: "api-bodies#OpenApiDocument" } } },
  { method: "get", path: "/health", tag: "meta", summary: "Liveness", responses: { 200: { description: "alive", body: "api-bodies#Health" } } },
  {
    method: "get", path: "/ready", tag: "meta", summary: "Readiness: the store answers",
    responses: { 200: { description: "ready", body: "api-bodies#Readiness" }, 503: { description: "not ready", body: "api-bodies#Readiness" } },
  },
  {
    method: "get", path: "/admin/:key/queues.json", tag: "admin", summary: "Queue admin data (needs BULL_AUTH_KEY in the path)",
    responses: { 200: { description: "queues and running crawls", body: "api-bodies#QueueSnapshot" }, 404: error("wrong key"), ...SERVER },
  },
  {
    method: "get", path: "/admin/:key/queues", tag: "admin", summary: "Queue admin page (HTML; needs BULL_AUTH_KEY in the path)",
    responses: { 200: { description: "the page", body: "html" }, 404: error("wrong key"), ...SERVER },
  },
  {
    method: "post", path: "/admin/:key/keys", tag: "admin", summary: "Create an API key for a team (needs BULL_AUTH_KEY)", body: "api-bodies#AdminKeyRequest",
    responses: { 200: { description: "the key, shown once", body: "api-bodies#AdminKeyCreated" }, ...BODY, 404: error("wrong key, or no database authentication"), ...SERVER },
  },
  {
    method: "get", path: "/admin/:key/keys", tag: "admin", summary: "List API keys (needs BULL_AUTH_KEY)",
    responses: { 200: { description: "keys (no secrets)", body: "api-bodies#AdminKeys" }, 404: error("wrong key, or no database authentication"), ...SERVER },
  },
  {
    method: "delete", path: "/admin/:key/keys/:keyId", tag: "admin", summary: "Revoke an API key (needs BULL_AUTH_KEY)",
    responses: { 200: { description: "revoked", body: "api-bodies#AdminKeyRevoked" }, 404: error("wrong key, unknown key id, or no database authentication"), ...SERVER },
  },
  {
    method: "get", path: "/admin/:key/teams", tag: "admin", summary: "List teams and their credits (needs BULL_AUTH_KEY)",
    responses: { 200: { description: "teams", body: "api-bodies#AdminTeams" }, 404: error("wrong key, or no database authentication"), ...SERVER },
  },
  {
    method: "post", path: "/v2/crawl/params-preview", tag: "crawl", summary: "Crawl options generated from a prompt (needs an LLM)", body: "params-preview-request",
    responses: { 200: { description: "generated options", body: "api-bodies#ParamsPreview" }, ...BODY, ...AUTH, ...SERVER },
  },
  {
    method: "post", path: "/v2/batch/scrape", tag: "batch", summary: "Submit a batch scrape", body: "batch-scrape-request",
    example: { urls: ["https://example.com/a", "https://example.com/b"], formats: ["markdown"] },
    responses: {
      200: {
        description: "accepted", body: "api-bodies#CrawlStarted",
        links: Object.fromEntries(["GET /v2/batch/scrape/:id", "DELETE /v2/batch/scrape/:id", "GET /v2/batch/scrape/:id/errors"].map((op) => [op.replace(/\W+/g, "_"), { operation: op, parameters: { id: "$response.body#/id" } }])),
      },
      404: error("appendToId names no batch of yours"), 409: error("idempotency key already used"), ...BODY, ...CREDITS, ...SERVER,
    },
  },
  {
    method: "get", path: "/v2/batch/scrape/:id", tag: "batch", summary: "Status and documents of a batch scrape (paged)", params: uuid,
    query: {
      skip: { type: "integer", minimum: 0, description: "first document (seq) of the chunk" },
      limit: { type: "integer", minimum: 1, maximum: 1000, description: "documents in the chunk" },
    },
    responses: { 200: { description: "status and a chunk of documents", body: "api-bodies#CrawlStatus" }, 400: error("invalid id or pagination"), 404: error("unknown or expired batch"), ...AUTH, ...SERVER },
  },
  {
    method: "delete", path: "/v2/batch/scrape/:id", tag: "batch", summary: "Cancel a batch scrape", params: uuid,
    responses: { 200: { description: "cancelled", body: "api-bodies#CrawlCancelled" }, 400: error("invalid id"), 404: error("unknown batch"), 409: error("the batch already ended"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/batch/scrape/:id/errors", tag: "batch", summary: "Pages of a batch scrape that failed", params: uuid,
    responses: { 200: { description: "errors", body: "api-bodies#CrawlErrors" }, 400: error("invalid id"), 404: error("unknown batch"), ...AUTH, ...SERVER },
  },
  {
    method: "post", path: "/v2/extract", tag: "extract", summary: "Start an extraction job (the rules provider, or an LLM when one is configured)", body: "extract-request",
    responses: { 200: { description: "accepted", body: "api-bodies#ExtractStarted", links: { status: { operation: "GET /v2/extract/:id", parameters: { id: "$response.body#/id" } } } }, ...BODY, ...CREDITS, ...SERVER },
  },
  {
    method: "get", path: "/v2/extract/:id", tag: "extract", summary: "Status and result of an extraction", params: uuid,
    responses: { 200: { description: "status", body: "api-bodies#ExtractStatus" }, 400: error("invalid id"), 404: error("unknown extraction"), ...AUTH, ...SERVER },
  },
  {
    method: "post", path: "/v2/map", tag: "map", summary: "The URLs of a site, from its sitemaps and links", body: "map-request",
    responses: { 200: { description: "links", body: "api-bodies#MapResult" }, 408: error("past the time limit"), ...BODY, ...CREDITS, ...SERVER },
  },
  {
    method: "post", path: "/v2/search", tag: "search", summary: "Search (SearXNG when configured, else Trawl's own index of stored documents)", body: "search-request",
    responses: { 200: { description: "results", body: "api-bodies#SearchResult" }, 408: error("past the time limit"), ...BODY, ...CREDITS, ...SERVER },
  },
  ...(["/v2/team/credit-usage", "/v2/team/token-usage", "/v2/team/queue-status", "/v2/concurrency-check"] as const).map((path): RouteDoc => ({
    method: "get", path, tag: "team", summary: `The team's ${path.split("/").at(-1)?.replace("-", " ")}`,
    responses: { 200: { description: "figures", body: "api-bodies#TeamFigures" }, ...AUTH, ...SERVER },
  })),
  ...(["credit", "token"] as const).map((what): RouteDoc => ({
    method: "get", path: `/v2/team/${what}-usage/historical`, tag: "team", summary: `The team's ${what} usage per calendar month`,
    query: { byApiKey: { type: "string", description: "\"false\" or absent; \"true\" (a breakdown per API key) is refused with 400: usage is recorded per team" } },
    responses: { 200: { description: "periods", body: "api-bodies#UsageHistory" }, 400: error("byApiKey=true (not supported) or another value than true / false"), ...AUTH, ...SERVER },
  })),
  // monitors: Firecrawl's /v2/monitor (scheduled recrawls with change tracking; see docs/api.md for what differs)
  {
    method: "post", path: "/v2/monitor", tag: "monitor", summary: "Create a monitor: a schedule that re-runs a crawl or batch scrape with change tracking", body: "monitor-request",
    example: { name: "Docs monitor", schedule: { cron: "*/30 * * * *", timezone: "UTC" }, targets: [{ type: "crawl", url: "https://example.com/docs", crawlOptions: { limit: 100 } }], webhook: { url: "https://example.com/hooks/monitor" } },
    responses: {
      200: { description: "created", body: "api-bodies#MonitorResponse", links: Object.fromEntries(["GET /v2/monitor/:id", "PATCH /v2/monitor/:id", "DELETE /v2/monitor/:id", "POST /v2/monitor/:id/run", "GET /v2/monitor/:id/checks"].map((op) => [op.replace(/\W+/g, "_"), { operation: op, parameters: { id: "$response.body#/data/id" } }])) },
      ...BODY, 403: error("the team has MONITOR_MAX_PER_TEAM monitors already"), ...AUTH, ...SERVER,
    },
  },
  {
    method: "get", path: "/v2/monitor", tag: "monitor", summary: "The team's monitors",
    query: { limit: { type: "integer", minimum: 1, maximum: 100, description: "monitors in the answer (default 25)" }, offset: { type: "integer", minimum: 0, description: "monitors skipped" } },
    responses: { 200: { description: "monitors, newest first", body: "api-bodies#MonitorList" }, 400: error("invalid limit or offset"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/monitor/:id", tag: "monitor", summary: "A monitor, with its next and last run", params: { id: { type: "string", format: "uuid", description: "the monitor id" } },
    responses: { 200: { description: "the monitor", body: "api-bodies#MonitorResponse" }, 400: error("invalid id"), 404: error("unknown or deleted monitor"), ...AUTH, ...SERVER },
  },
  {
    method: "patch", path: "/v2/monitor/:id", tag: "monitor", summary: "Update a monitor; `status` pauses (paused) or resumes (active) it", params: { id: { type: "string", format: "uuid", description: "the monitor id" } },
    body: "monitor-update", example: { status: "paused" },
    responses: { 200: { description: "the updated monitor", body: "api-bodies#MonitorResponse" }, ...BODY, 404: error("unknown or deleted monitor"), ...AUTH, ...SERVER },
  },
  {
    method: "delete", path: "/v2/monitor/:id", tag: "monitor", summary: "Delete a monitor (its checks' results stay until they expire)", params: { id: { type: "string", format: "uuid", description: "the monitor id" } },
    responses: { 200: { description: "deleted", body: "api-bodies#MonitorDeleted" }, 400: error("invalid id"), 404: error("unknown or deleted monitor"), ...AUTH, ...SERVER },
  },
  {
    method: "post", path: "/v2/monitor/:id/run", tag: "monitor", summary: "Run a check now (outside the schedule)", params: { id: { type: "string", format: "uuid", description: "the monitor id" } },
    responses: { 200: { description: "the check, started", body: "api-bodies#MonitorCheckResponse" }, 400: error("invalid id"), 404: error("unknown or deleted monitor"), 409: error("a check of the monitor is still running"), ...CREDITS, ...SERVER },
  },
  {
    method: "get", path: "/v2/monitor/:id/checks", tag: "monitor", summary: "The monitor's checks, newest first", params: { id: { type: "string", format: "uuid", description: "the monitor id" } },
    query: { limit: { type: "integer", minimum: 1, maximum: 100, description: "checks in the answer (default 25)" }, offset: { type: "integer", minimum: 0, description: "checks skipped" } },
    responses: { 200: { description: "checks", body: "api-bodies#MonitorChecks" }, 400: error("invalid id, limit or offset"), 404: error("unknown or deleted monitor"), ...AUTH, ...SERVER },
  },
  {
    method: "get", path: "/v2/monitor/:id/checks/:checkId", tag: "monitor", summary: "One check with its pages (paged; the check id is also its crawl or batch scrape id)",
    params: { id: { type: "string", format: "uuid", description: "the monitor id" }, checkId: { type: "string", format: "uuid", description: "the check id" } },
    query: {
      skip: { type: "integer", minimum: 0, description: "first page (document seq) of the chunk" }, limit: { type: "integer", minimum: 1, maximum: 1000, description: "pages in the chunk (default 100)" },
      status: { type: "string", description: "only pages of this status: same, new, changed, removed, error" },
    },
    responses: { 200: { description: "the check and a chunk of its pages", body: "api-bodies#MonitorCheckResponse" }, 400: error("invalid id or pagination"), 404: error("unknown monitor or check"), ...AUTH, ...SERVER },
  },
];
