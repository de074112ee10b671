// Request -> internal options: the page-level options (scrapeOptions of a crawl, the top level of POST /v2/scrape) and
// a crawl's options, with defaults applied. Shared by the HTTP API and the CLI; refusals are RequestErrors (HTTP 400).
import type { CrawlOptions, CrawlRequest, ScrapeOptions } from "../../schemas/index.ts";
import { parseSelector } from "../convert/selector.ts";
import { compileUserSchema, InvalidSchemaError } from "../extract-json/user-schema.ts";
import { invalidField } from "../runtime/errors.ts";
import { patternError } from "../url/scope.ts";

type Format = CrawlOptions["formats"][number];

export type ScrapeSettings = Pick<CrawlOptions, "formats" | "json" | "onlyMainContent" | "timeoutMs" | "headers" | "pdf" | "includeTags" | "excludeTags" | "removeBase64Images" | "maxAgeMs" | "storeInCache">;

/** The page-level options with defaults applied; `path` is where they sit in the request (for error details). */
export function scrapeSettings(so: ScrapeOptions, path: string[]): ScrapeSettings {
  const formats: Format[] = [];
  let json: CrawlOptions["json"];
  (so.formats ?? ["markdown"]).forEach((f, i) => {
    const type = typeof f === "string" ? f : f.type;
    if (type === "json" && typeof f === "object") {
      if (json) throw invalidField([...path, "formats", i], "at most one json format");
      json = jsonFormat(f, [...path, "formats", i]);
    }
    if (!formats.includes(type)) formats.push(type);
  });
  if (so.waitFor !== undefined && so.timeout !== undefined && so.waitFor > so.timeout / 2) {
    throw invalidField([...path, "waitFor"], "waitFor must not exceed half of timeout");
  }
  if (so.proxy === "stealth" || so.proxy === "enhanced") {
    throw invalidField([...path, "proxy"], `proxy "${so.proxy}" is not available on this server (no anti-bot proxy network); use "basic" or "auto", which go through PROXY_SERVER when it is set`);
  }
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
    onlyMainContent: so.onlyMainContent ?? true,
    ...(so.includeTags?.length ? { includeTags: so.includeTags } : {}),
    ...(so.excludeTags?.length ? { excludeTags: so.excludeTags } : {}),
    ...(so.removeBase64Images === false ? { removeBase64Images: false } : {}),
    ...(so.timeout !== undefined ? { timeoutMs: so.timeout } : {}),
    ...(so.headers ? { headers: so.headers } : {}),
    ...(pdf ? { pdf } : {}),
    ...(so.maxAge ? { maxAgeMs: so.maxAge } : {}),
    ...(so.storeInCache === false ? { storeInCache: false } : {}),
  };
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

/** A crawl request's options with defaults applied (`defaultLimit` when the request sets no `limit`). */
export function crawlOptions(body: CrawlRequest, defaultLimit: number): CrawlOptions {
  refuseZeroDataRetention(body.zeroDataRetention);
  const page = scrapeSettings(body.scrapeOptions ?? {}, ["scrapeOptions"]);
  checkPatterns(body);
  const opt = <K extends keyof CrawlOptions>(key: K, value: CrawlOptions[K] | undefined) => (value === undefined ? {} : { [key]: value });
  return {
    limit: body.limit ?? defaultLimit,
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

/** zeroDataRetention: true is refused, not accepted and ignored (results are kept for their retention time). */
export function refuseZeroDataRetention(value: boolean | undefined): void {
  if (value) throw invalidField(["zeroDataRetention"], "zeroDataRetention is not supported by this server: results are kept for 24 hours");
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
