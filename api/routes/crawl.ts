// /v2/crawl routes: submit, status (paged), cancel, errors.
import Router from "@koa/router";
import type { Context } from "koa";
import type { CrawlOptions, CrawlRequest, ScrapeOptions } from "../../schemas/index.ts";
import type { ApiDeps } from "../app.ts";
import { badRequest, HttpError, jobNotFound, methodNotAllowed } from "../errors.ts";
import { checkWebhookUrl } from "../webhook-url.ts";
import { publicBase } from "../public-url.ts";
import { checkStartUrl } from "../start-url.ts";
import { validateBody } from "../validate.ts";
import { RETENTION_MS, ROBOTS_BLOCKED } from "../../pipeline/frontier/reducer.ts";
import { patternError } from "../../pipeline/frontier/scope.ts";
import { parseSelector } from "../../pipeline/convert/selector.ts";
import type { CrawlRecord } from "../../pipeline/store/crawl-store.ts";
import { cancelCrawl, submitCrawl } from "../../pipeline/usecases/submit-crawl.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_PAGE_DOCS = 100;

type Format = CrawlOptions["formats"][number];

export type ScrapeSettings = Pick<CrawlOptions, "formats" | "onlyMainContent" | "timeoutMs" | "headers" | "pdf" | "includeTags" | "excludeTags" | "removeBase64Images" | "maxAgeMs" | "storeInCache">;

/** The page-level options (scrapeOptions of a crawl, the top level of POST /v2/scrape), with defaults applied. */
export function scrapeSettings(so: ScrapeOptions, path: string[]): ScrapeSettings {
  const formats: Format[] = [];
  for (const f of so.formats ?? ["markdown"]) {
    const type = typeof f === "string" ? f : f.type;
    if (type === "json") {
      throw badRequest([{ code: "custom", path: [...path, "formats"], message: "The json format is not supported by this server yet" }],
        "The json format is not supported by this server yet");
    }
    if (!formats.includes(type)) formats.push(type);
  }
  if (so.waitFor !== undefined && so.timeout !== undefined && so.waitFor > so.timeout / 2) {
    throw badRequest([{ code: "custom", path: [...path, "waitFor"], message: "waitFor must not exceed half of timeout" }],
      "waitFor must not exceed half of timeout");
  }
  if (so.proxy === "stealth" || so.proxy === "enhanced") {
    const message = `proxy "${so.proxy}" is not available on this server (no anti-bot proxy network); use "basic" or "auto", which go through PROXY_SERVER when it is set`;
    throw badRequest([{ code: "custom", path: [...path, "proxy"], message }], message);
  }
  const pdf = pdfOption(so.parsers);
  for (const field of ["includeTags", "excludeTags"] as const) {
    (so[field] ?? []).forEach((selector, i) => {
      try {
        parseSelector(selector);
      } catch (err) {
        const message = `Invalid ${field} selector "${selector}": ${(err as Error).message}`;
        throw badRequest([{ code: "custom", path: [...path, field, i], message }], message);
      }
    });
  }
  return {
    formats,
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

export function crawlOptions(body: CrawlRequest, defaultLimit: number): CrawlOptions {
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

/** `parsers`: absent -> parse PDFs; [] -> PDFs as base64 (1 credit); "pdf" / {type:"pdf", maxPages} -> parse, capped. */
function pdfOption(parsers: NonNullable<CrawlRequest["scrapeOptions"]>["parsers"]): CrawlOptions["pdf"] {
  if (parsers === undefined) return undefined;
  const entry = parsers.find((p) => (typeof p === "string" ? p : p.type) === "pdf");
  if (!entry) return { parse: false };
  return typeof entry === "string" || entry.maxPages === undefined ? { parse: true } : { parse: true, maxPages: entry.maxPages };
}

/** includePaths / excludePaths: RE2 syntax (linear time: no look-around, no back-references), bounded in size. */
function checkPatterns(body: CrawlRequest): void {
  const all = [...(body.includePaths ?? []), ...(body.excludePaths ?? [])];
  if (all.length > 1000 || all.reduce((n, p) => n + p.length, 0) > 100_000) {
    const message = "includePaths and excludePaths may hold at most 1000 patterns and 100000 characters together";
    throw badRequest([{ code: "custom", path: ["includePaths"], message }], message);
  }
  for (const field of ["includePaths", "excludePaths"] as const) {
    (body[field] ?? []).forEach((pattern, i) => {
      const why = patternError(pattern);
      if (why) {
        const message = `Invalid ${field} pattern "${pattern}": ${why}. Patterns use Rust regex (RE2-style) syntax: no look-around, no back-references.`;
        throw badRequest([{ code: "custom", path: [field, i], message }], message);
      }
    });
  }
}

/** The status `warning`, as the anchor words it (only once a crawl has ended). */
export function statusWarning(crawl: CrawlRecord, robotsBlocked: number): string | undefined {
  if (crawl.status === "scraping") return undefined;
  if (robotsBlocked > 0) {
    return `${robotsBlocked} URL(s) were not crawled because robots.txt disallows them (see robotsBlocked at GET /v2/crawl/${crawl.crawlId}/errors). To fetch a single such page, use the /scrape endpoint.`;
  }
  const start = new URL(crawl.url);
  if (crawl.completed <= 1 && start.pathname !== "/" && !crawl.options.crawlEntireDomain) {
    return `Only ${crawl.completed} result(s) found. For broader coverage, try crawling with crawlEntireDomain=true or start from a higher-level path like ${start.origin}/`;
  }
  return undefined;
}

const LISTS = ["active", "ongoing"];

const HIDDEN_ERRORS = new Set(["SCRAPE_RACED_REDIRECT", ROBOTS_BLOCKED]);

function crawlId(ctx: Context): string {
  const id = String(ctx.params.id);
  if (!UUID.test(id)) throw new HttpError(400, { success: false, error: "Invalid job ID format. Job ID must be a valid UUID." });
  return id;
}

/** `skip` and `limit` query parameters, strictly parsed (digits only; limit 1..1000). */
export function pagination(query: Record<string, string | string[] | undefined>): { skip: number; limit?: number } {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw new HttpError(400, { success: false, error: `Invalid pagination: ${name} must be given once` });
    return v;
  };
  const skipRaw = one("skip");
  const limitRaw = one("limit");
  if (skipRaw !== undefined && !/^\d+$/.test(skipRaw)) {
    throw new HttpError(400, { success: false, error: "Invalid pagination: skip must be a non-negative integer without trailing characters" });
  }
  const skip = skipRaw === undefined ? 0 : Number(skipRaw);
  if (!Number.isSafeInteger(skip)) throw new HttpError(400, { success: false, error: "Invalid pagination: skip is too large" });
  if (limitRaw === undefined) return { skip };
  if (!/^\d+$/.test(limitRaw)) throw new HttpError(400, { success: false, error: "Invalid pagination: limit must be a positive integer without trailing characters" });
  const limit = Number(limitRaw);
  if (limit < 1 || limit > 1000) throw new HttpError(400, { success: false, error: "Invalid pagination: limit must be between 1 and 1000" });
  return { skip, limit };
}

export function crawlRoutes(deps: ApiDeps): Router {
  const { config, store, clock } = deps;
  const router = new Router();

  router.post("/v2/crawl", async (ctx) => {
    const body = validateBody<CrawlRequest>("crawl-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    checkWebhookUrl(body.webhook);
    const options = crawlOptions(body, config.defaultCrawlLimit);
    const webhook = body.webhook === undefined ? "" : JSON.stringify(body.webhook);
    const id = await submitCrawl(deps, { url, options, teamId: ctx.state.teamId, webhook });
    ctx.body = { success: true, id, url: `${publicBase(ctx, config.trustProxy)}/v2/crawl/${id}` };
  });

  for (const path of LISTS.map((l) => `/v2/crawl/${l}`)) {
    router.get(path, async (ctx) => {
      const crawls = await store.activeCrawls(ctx.state.teamId);
      ctx.body = {
        success: true,
        crawls: crawls.map((c) => ({ id: c.crawlId, teamId: c.teamId, url: c.url, created_at: new Date(c.createdAt).toISOString(), options: c.options })),
      };
    });
  }

  router.get("/v2/crawl/:id", async (ctx) => {
    const id = crawlId(ctx);
    const { skip, limit } = pagination(ctx.query);
    const crawl = await store.getCrawl(id);
    if (!crawl || crawl.teamId !== ctx.state.teamId) throw jobNotFound();
    const now = clock.now();
    if (crawl.status !== "scraping" && crawl.expiresAt < now) throw new HttpError(404, { success: false, error: "Job expired" });
    const page = await store.pageDocuments(id, skip, config.statusChunkMaxBytes, limit ?? DEFAULT_PAGE_DOCS);
    const expiresAt = new Date(Math.floor((crawl.status === "scraping" ? now + RETENTION_MS : crawl.expiresAt) / 1000) * 1000).toISOString();
    const head: Record<string, unknown> = {
      success: crawl.status !== "failed",
      status: crawl.status,
      completed: crawl.completed,
      total: crawl.total,
      creditsUsed: crawl.creditsUsed,
      expiresAt,
    };
    if (crawl.status === "failed") head.error = crawl.error || "the crawl failed";
    if (page.more) head.next = `${publicBase(ctx, config.trustProxy)}/v2/crawl/${id}?skip=${page.nextSkip}${limit !== undefined ? `&limit=${limit}` : ""}`;
    if (crawl.failed > 0) head.failed = crawl.failed;
    if (crawl.status !== "scraping") {
      const blocked = (await store.listErrors(id)).filter((e) => e.code === ROBOTS_BLOCKED).length;
      const warning = statusWarning(crawl, blocked);
      if (warning) head.warning = warning;
    }
    // documents are stored as JSON text: splice them in without parsing
    ctx.type = "application/json";
    ctx.body = `${JSON.stringify(head).slice(0, -1)},"data":[${page.docs.join(",")}]}`;
  });

  router.delete("/v2/crawl/:id", async (ctx) => {
    // /v2/crawl/active and /ongoing are lists (GET only), not crawl ids
    if (LISTS.includes(String(ctx.params.id))) throw methodNotAllowed(ctx, ["GET", "HEAD"]);
    const id = crawlId(ctx);
    const crawl = await store.getCrawl(id);
    if (!crawl || crawl.teamId !== ctx.state.teamId) throw new HttpError(404, { error: "Job not found" });
    if (crawl.status === "cancelled") {
      ctx.body = { status: "cancelled" };
      return;
    }
    if (crawl.status !== "scraping") throw new HttpError(409, { error: "Crawl is already completed" });
    await cancelCrawl(deps, id);
    ctx.body = { status: "cancelled" };
  });

  router.get("/v2/crawl/:id/errors", async (ctx) => {
    const id = crawlId(ctx);
    const crawl = await store.getCrawl(id);
    if (!crawl || crawl.teamId !== ctx.state.teamId) throw jobNotFound();
    const errors = await store.listErrors(id);
    ctx.body = {
      errors: errors.filter((e) => !HIDDEN_ERRORS.has(e.code)).map((e) => ({ id: e.urlKey, timestamp: new Date(e.at).toISOString(), url: e.url, code: e.code, error: e.error })),
      robotsBlocked: errors.filter((e) => e.code === ROBOTS_BLOCKED).map((e) => e.url),
    };
  });

  return router;
}
