// Request -> internal options: the page-level options (scrapeOptions of a crawl, the top level of POST /v2/scrape) and
// a crawl's options, with defaults applied. Shared by the HTTP API and the CLI; refusals are RequestErrors (HTTP 400).
import type { BrowserAction, CrawlOptions, CrawlRequest, ScrapeOptions } from "../../schemas/index.ts";
import { parseSelector } from "../convert/selector.ts";
import { compileUserSchema, InvalidSchemaError } from "../extract-json/user-schema.ts";
import { invalidField } from "../runtime/errors.ts";
import { patternError } from "../url/scope.ts";

type Format = CrawlOptions["formats"][number];

export type ScrapeSettings = Pick<CrawlOptions, "formats" | "json" | "onlyMainContent" | "timeoutMs" | "headers" | "pdf" | "includeTags" | "excludeTags" | "removeBase64Images" | "maxAgeMs" | "storeInCache"
  | "attributes" | "question" | "highlightsQuery" | "minAgeMs" | "lockdown" | "waitForMs" | "actions" | "screenshot" | "mobile" | "skipTlsVerification" | "fastMode" | "blockAds" | "changeTracking">;

/** Firecrawl's refusal, word for word (a 400 on formats). */
export const CHANGE_TRACKING_NEEDS_MARKDOWN = "The changeTracking format requires the markdown format to be specified as well";

/** The fields each action type needs (the schema allows every field on every action). */
const ACTION_FIELDS: Record<BrowserAction["type"], { required: (keyof BrowserAction)[]; allowed: (keyof BrowserAction)[] }> = {
  wait: { required: [], allowed: ["milliseconds", "selector"] },
  click: { required: ["selector"], allowed: ["selector", "all"] },
  write: { required: ["text"], allowed: ["text"] },
  press: { required: ["key"], allowed: ["key"] },
  scroll: { required: [], allowed: ["direction", "selector"] },
  screenshot: { required: [], allowed: ["fullPage", "quality", "viewport"] },
  scrape: { required: [], allowed: [] },
  executeJavascript: { required: ["script"], allowed: ["script"] },
  pdf: { required: [], allowed: ["landscape", "scale", "format"] },
};

/** Per action type: its fields present and no other; total waiting at most 60 s (Firecrawl's rule). */
function checkActions(actions: BrowserAction[], waitForMs: number, path: string[]): void {
  let waitMs = waitForMs;
  actions.forEach((action, i) => {
    const spec = ACTION_FIELDS[action.type];
    for (const field of spec.required) if (action[field] === undefined) throw invalidField([...path, "actions", i, field], `a ${action.type} action needs ${field}`);
    for (const field of Object.keys(action) as (keyof BrowserAction)[]) {
      if (field !== "type" && !spec.allowed.includes(field)) throw invalidField([...path, "actions", i, field], `a ${action.type} action has no ${field}`);
    }
    if (action.type === "wait" && (action.milliseconds === undefined) === (action.selector === undefined)) {
      throw invalidField([...path, "actions", i], "a wait action needs either milliseconds or selector, not both");
    }
    if (action.type === "wait") waitMs += action.milliseconds ?? 1000;
  });
  if (waitMs > 60_000) throw invalidField([...path, "actions"], "Total wait time (waitFor + wait actions) cannot exceed 60 seconds");
}

/** The page-level options with defaults applied; `path` is where they sit in the request (for error details). */
export function scrapeSettings(so: ScrapeOptions, path: string[]): ScrapeSettings {
  const formats: Format[] = [];
  let screenshot: ScrapeSettings["screenshot"];
  let json: CrawlOptions["json"];
  let attributes: CrawlOptions["attributes"];
  let question: string | undefined;
  let highlightsQuery: string | undefined;
  let tracking: { modes: ("git-diff" | "json")[]; tag: string; schema?: Record<string, unknown>; prompt?: string } | undefined;
  (so.formats ?? ["markdown"]).forEach((f, i) => {
    const type = typeof f === "string" ? f : f.type;
    if (type === "changeTracking") {
      const spec: { modes?: ("git-diff" | "json")[]; tag?: string | null; schema?: Record<string, unknown>; prompt?: string } = typeof f === "string" ? {} : f;
      if (spec.schema !== undefined) jsonFormat({ schema: spec.schema }, [...path, "formats", i]);
      tracking = { modes: [...new Set(spec.modes ?? [])], tag: spec.tag ?? "", ...(spec.schema ? { schema: spec.schema } : {}), ...(spec.prompt ? { prompt: spec.prompt } : {}) };
      return;
    }
    if (typeof f !== "string" && (f.modes !== undefined || f.tag !== undefined)) {
      throw invalidField([...path, "formats", i], `modes and tag belong to the changeTracking format, not ${type}`);
    }
    if (type === "json" && typeof f === "object") {
      if (json) throw invalidField([...path, "formats", i], "at most one json format");
      json = jsonFormat(f, [...path, "formats", i]);
    }
    if (type === "screenshot" || type === "screenshot@fullPage") {
      if (screenshot) throw invalidField([...path, "formats"], "Only one screenshot format is allowed");
      const spec: { fullPage?: boolean; quality?: number; viewport?: { width: number; height: number } } = typeof f === "string" ? {} : f;
      screenshot = {
        fullPage: type === "screenshot@fullPage" || spec.fullPage === true,
        ...(spec.quality !== undefined ? { quality: spec.quality } : {}),
        ...(spec.viewport ? { viewport: spec.viewport } : {}),
      };
      return;
    }
    if (typeof f === "object") {
      const text = textFormat(f, type, [...path, "formats", i]);
      if (text && (type === "question" ? question : highlightsQuery) !== undefined) throw invalidField([...path, "formats", i], `at most one ${type} format`);
      if (type === "question") question = text;
      if (type === "highlights") highlightsQuery = text;
    }
    if (type === "attributes" && typeof f === "object") {
      if (attributes) throw invalidField([...path, "formats", i], "at most one attributes format");
      attributes = attributesFormat(f.selectors, [...path, "formats", i]);
    } else if (typeof f === "object" && f.selectors !== undefined) {
      throw invalidField([...path, "formats", i, "selectors"], `selectors belong to the attributes format, not ${type}`);
    }
    if (typeof f !== "string" && "fullPage" in f) {
      throw invalidField([...path, "formats", i], `fullPage, quality and viewport belong to the screenshot format, not ${type}`);
    }
    if (!formats.includes(type)) formats.push(type);
  });
  if (tracking && !formats.includes("markdown")) throw invalidField([...path, "formats"], CHANGE_TRACKING_NEEDS_MARKDOWN);
  // json mode compares the json format's fields; with a schema of its own and no json format, json is extracted for
  // the comparison only (and left out of the document)
  const trackingJson = tracking?.modes.includes("json") === true && !formats.includes("json") && tracking.schema !== undefined;
  if (tracking && trackingJson) {
    formats.push("json");
    json = { schema: tracking.schema as Record<string, unknown>, ...(tracking.prompt ? { prompt: tracking.prompt } : {}) };
  }
  if (so.actions?.length) checkActions(so.actions, so.waitFor ?? 0, path);
  if (so.waitFor !== undefined && so.timeout !== undefined && so.waitFor > so.timeout / 2) {
    throw invalidField([...path, "waitFor"], "waitFor must not exceed half of timeout");
  }
  if (so.proxy === "stealth" || so.proxy === "enhanced") {
    throw invalidField([...path, "proxy"], `proxy "${so.proxy}" is not available on this server (no anti-bot proxy network); use "basic" or "auto", which go through PROXY_SERVER when it is set`);
  }
  if (so.location !== undefined) {
    throw invalidField([...path, "location"], "location is not supported by this server: it fetches from its own network (no geolocated proxies); leave location out");
  }
  (so.parsers ?? []).forEach((p, i) => {
    if (typeof p === "object" && p.mode === "ocr") throw invalidField([...path, "parsers", i, "mode"], `parsers[].mode "ocr" is not supported by this server (PDF text is extracted from the text layer); use "fast" or "auto"`);
  });
  const browserFormat = screenshot !== undefined ? "a screenshot" : formats.includes("branding") ? "branding" : null;
  if (so.fastMode === true) checkFastMode(so, browserFormat, path);
  if (so.minAge !== undefined || so.lockdown === true) checkCacheOnly(so, browserFormat, path);
  const pdf = pdfOption(so.parsers);
  for (const field of ["includeTags", "excludeTags"] as const) {
    (so[field] ?? []).forEach((selector, i) => {
      try {
        parseSelector(selector);
      } catch (err) {
        throw invalidField([...path, field, i], `Invalid ${field} selector "${selector}": ${(err as Error).message}`);
      }
    });
  }
  return {
    formats,
    ...(json && (json.schema || json.prompt) ? { json } : {}),
    ...(attributes ? { attributes } : {}),
    ...(question !== undefined ? { question } : {}),
    ...(highlightsQuery !== undefined ? { highlightsQuery } : {}),
    onlyMainContent: so.onlyMainContent ?? true,
    ...(so.includeTags?.length ? { includeTags: so.includeTags } : {}),
    ...(so.excludeTags?.length ? { excludeTags: so.excludeTags } : {}),
    ...(so.removeBase64Images === false ? { removeBase64Images: false } : {}),
    ...(so.timeout !== undefined ? { timeoutMs: so.timeout } : {}),
    ...(so.headers ? { headers: so.headers } : {}),
    ...(pdf ? { pdf } : {}),
    ...(so.maxAge ? { maxAgeMs: so.maxAge } : so.lockdown === true && so.maxAge === undefined ? { maxAgeMs: LOCKDOWN_MAX_AGE_MS } : {}),
    ...(so.minAge !== undefined ? { minAgeMs: so.minAge } : {}),
    ...(so.lockdown === true ? { lockdown: true } : {}),
    ...(so.storeInCache === false ? { storeInCache: false } : {}),
    ...(so.waitFor ? { waitForMs: so.waitFor } : {}),
    ...(so.actions?.length ? { actions: so.actions } : {}),
    ...(screenshot ? { screenshot } : {}),
    ...(so.mobile ? { mobile: true } : {}),
    ...(so.skipTlsVerification === false ? { skipTlsVerification: false } : {}),
    ...(so.fastMode === true ? { fastMode: true } : {}),
    ...(so.blockAds === false ? { blockAds: false } : {}),
    ...(tracking ? { changeTracking: { modes: tracking.modes, tag: tracking.tag, ...(trackingJson ? { trackingJson: true } : {}) } } : {}),
  };
}

/**
 * fastMode, as on Firecrawl (where it keeps a scrape to the engines without a browser): a static fetch only, never
 * the headless browser. An option only a browser can honour cannot be combined with it.
 */
function checkFastMode(so: ScrapeOptions, browserFormat: string | null, path: string[]): void {
  const needs = so.actions?.length ? "actions" : browserFormat ? "formats" : so.waitFor ? "waitFor" : so.mobile ? "mobile" : null;
  if (needs) throw invalidField([...path, needs], `fastMode fetches the page without a browser, and ${needs === "formats" ? browserFormat : needs} needs one: drop fastMode or ${needs === "formats" ? formatName(browserFormat) : needs}`);
}

/** "a screenshot" -> "the screenshot format", "branding" -> "the branding format" */
const formatName = (browserFormat: string | null) => `the ${browserFormat === "branding" ? "branding" : "screenshot"} format`;

/** lockdown without maxAge: Firecrawl's 2 years (the page cache's own retention, CACHE_MAX_AGE_MS, still caps it). */
export const LOCKDOWN_MAX_AGE_MS = 2 * 365 * 24 * 3_600_000;

/**
 * minAge and lockdown serve a page from the page cache only. The cache holds fetched responses, so an option that
 * needs a live browser (actions, a screenshot, branding, waitFor, mobile) cannot be served from it; maxAge 0 ("never the
 * cache") contradicts lockdown.
 */
function checkCacheOnly(so: ScrapeOptions, browserFormat: string | null, path: string[]): void {
  const field = so.lockdown === true ? "lockdown" : "minAge";
  const needs = so.actions?.length ? "actions" : browserFormat ? "formats" : so.waitFor ? "waitFor" : so.mobile ? "mobile" : null;
  if (needs) throw invalidField([...path, needs], `${field} serves the page from the page cache, which holds fetched responses, and ${needs === "formats" ? browserFormat : needs} needs a live browser: drop ${field} or ${needs === "formats" ? formatName(browserFormat) : needs}`);
  if (so.lockdown === true && so.maxAge === 0) throw invalidField([...path, "maxAge"], "lockdown serves only cached pages, and maxAge 0 refuses every cached page: drop maxAge or lockdown");
}

/** The anchor's known `integration` values; any other must start with "_". */
const INTEGRATIONS = ["dify", "zapier", "pipedream", "raycast", "langchain", "crewai", "llamaindex", "n8n", "camelai", "make", "flowise", "metagpt", "relevanceai"];

/** Fields every job request carries (crawl, batch, scrape): refused when they ask for what this server does not do. */
export function checkJobFields(body: { zeroDataRetention?: boolean; integration?: string | null }): void {
  if (body.zeroDataRetention === true) {
    throw invalidField(["zeroDataRetention"], "zeroDataRetention is not supported by this server: documents are kept for 24 hours (and pages in the page cache); send false or leave it out");
  }
  const integration = body.integration;
  if (typeof integration === "string" && integration !== "" && !INTEGRATIONS.includes(integration) && !integration.startsWith("_")) {
    throw invalidField(["integration"], `Invalid integration "${integration}": use one of ${INTEGRATIONS.join(", ")} or a custom name starting with "_"`);
  }
}

/** question needs `question`, highlights needs `query` (Firecrawl's fields); another format has neither. */
function textFormat(f: { question?: string; query?: string }, type: string, path: (string | number)[]): string | undefined {
  const field = type === "question" ? "question" : type === "highlights" ? "query" : undefined;
  for (const name of ["question", "query"] as const) {
    if (name !== field && f[name] !== undefined) throw invalidField([...path, name], `${name} belongs to the ${name === "question" ? "question" : "highlights"} format, not ${type}`);
  }
  if (!field) return undefined;
  const text = f[field];
  if (!text?.trim()) throw invalidField([...path, field], `the ${type} format needs ${field}`);
  return text;
}

/** The attributes format's selectors, each parsed by the convert stage's own selector engine: a 400 names the one it cannot read. */
function attributesFormat(selectors: { selector: string; attribute: string }[] | undefined, path: (string | number)[]): NonNullable<CrawlOptions["attributes"]> {
  if (!selectors?.length) throw invalidField([...path, "selectors"], "the attributes format needs selectors: [{ selector, attribute }]");
  selectors.forEach(({ selector }, j) => {
    try {
      parseSelector(selector);
    } catch (err) {
      throw invalidField([...path, "selectors", j, "selector"], `Invalid selector "${selector}": ${(err as Error).message}`);
    }
  });
  return selectors.map(({ selector, attribute }) => ({ selector, attribute }));
}

/** The json format's schema, compiled with ajv: an invalid JSON Schema is a 400 naming the problem. */
function jsonFormat(f: { schema?: Record<string, unknown>; prompt?: string }, path: (string | number)[]): NonNullable<CrawlOptions["json"]> {
  if (f.schema !== undefined) {
    try {
      compileUserSchema(f.schema);
    } catch (err) {
      if (!(err instanceof InvalidSchemaError)) throw err;
      throw invalidField([...path, "schema"], err.message);
    }
  }
  return { ...(f.schema ? { schema: f.schema } : {}), ...(f.prompt ? { prompt: f.prompt } : {}) };
}

/** Refuses (400) a job of more pages than the server's CRAWL_MAX_PAGES. */
export function checkPageLimit(pages: number, maxPages: number, path: (string | number)[], subject: (pages: number) => string): void {
  if (pages > maxPages) throw invalidField(path, `${subject(pages)} is above this server's maximum of ${maxPages} pages per job (CRAWL_MAX_PAGES)`);
}

/**
 * A crawl request's options with defaults applied (`defaultLimit`, at most `maxPages`, when the request sets no
 * `limit`); a `limit` above `maxPages` (CRAWL_MAX_PAGES) is refused.
 */
export function crawlOptions(body: CrawlRequest, defaultLimit: number, maxPages = Infinity): CrawlOptions {
  if (body.limit !== undefined) checkPageLimit(body.limit, maxPages, ["limit"], (n) => `limit ${n}`);
  checkJobFields(body);
  const page = scrapeSettings(body.scrapeOptions ?? {}, ["scrapeOptions"]);
  for (const field of ["minAge", "lockdown"] as const) {
    const value = body.scrapeOptions?.[field];
    if (value !== undefined && value !== false) {
      throw invalidField(["scrapeOptions", field], `${field} is for /v2/scrape and /v2/batch/scrape: a crawl fetches robots.txt and sitemaps and follows links live; use scrapeOptions.maxAge to take its pages from the cache`);
    }
  }
  checkPatterns(body);
  const opt = <K extends keyof CrawlOptions>(key: K, value: CrawlOptions[K] | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    limit: body.limit ?? Math.min(defaultLimit, maxPages),
    crawlEntireDomain: body.crawlEntireDomain ?? false,
    allowSubdomains: body.allowSubdomains ?? false,
    ...page,
    ...opt("includePaths", body.includePaths?.length ? body.includePaths : undefined),
    ...opt("excludePaths", body.excludePaths?.length ? body.excludePaths : undefined),
    ...opt("regexOnFullURL", body.regexOnFullURL),
    ...opt("maxDiscoveryDepth", body.maxDiscoveryDepth),
    ...opt("allowExternalLinks", body.allowExternalLinks),
    ...opt("ignoreQueryParameters", body.ignoreQueryParameters),
    ...opt("deduplicateSimilarURLs", body.deduplicateSimilarURLs),
    ...opt("sitemap", body.sitemap),
    ...opt("ignoreRobotsTxt", body.ignoreRobotsTxt),
    ...opt("robotsUserAgent", body.robotsUserAgent),
    ...opt("delayMs", body.delay === undefined ? undefined : Math.round(body.delay * 1000)),
    ...opt("maxConcurrency", body.maxConcurrency),
  };
}

/** `parsers`: absent -> parse PDFs; [] -> PDFs as base64 (1 credit); "pdf" / {type:"pdf", maxPages} -> parse, capped. */
function pdfOption(parsers: ScrapeOptions["parsers"]): CrawlOptions["pdf"] {
  if (parsers === undefined) return undefined;
  const entry = parsers.find((p) => (typeof p === "string" ? p : p.type) === "pdf");
  if (!entry) return { parse: false };
  return typeof entry === "string" || entry.maxPages === undefined ? { parse: true } : { parse: true, maxPages: entry.maxPages };
}

/** includePaths / excludePaths: RE2 syntax (linear time: no look-around, no back-references), bounded in size. */
function checkPatterns(body: CrawlRequest): void {
  const all = [...(body.includePaths ?? []), ...(body.excludePaths ?? [])];
  if (all.length > 1000 || all.reduce((n, p) => n + p.length, 0) > 100_000) {
    throw invalidField(["includePaths"], "includePaths and excludePaths may hold at most 1000 patterns and 100000 characters together");
  }
  for (const field of ["includePaths", "excludePaths"] as const) {
    (body[field] ?? []).forEach((pattern, i) => {
      const why = patternError(pattern);
      if (why) throw invalidField([field, i], `Invalid ${field} pattern "${pattern}": ${why}. Patterns use Rust regex (RE2-style) syntax: no look-around, no back-references.`);
    });
  }
}

/** A batch scrape's options: its page options (the top level of the body), its seeds only, robots.txt as /scrape does. */
export function batchOptions(page: ScrapeOptions, urls: number, maxConcurrency: number | undefined): CrawlOptions {
  return {
    kind: "batch",
    limit: Math.max(1, urls),
    crawlEntireDomain: false,
    allowSubdomains: false,
    ...scrapeSettings(page, []),
    sitemap: "skip",
    ignoreRobotsTxt: true,
    ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
  };
}

/** The webhook a job stores (JSON text, "" for none): the request's, else SELF_HOSTED_WEBHOOK_URL when set. */
export function webhookSetting(webhook: CrawlRequest["webhook"], defaultUrl: string): string {
  if (webhook !== undefined) return JSON.stringify(webhook);
  return defaultUrl ? JSON.stringify(defaultUrl) : "";
}
