// /v2/crawl routes: submit, status (paged), cancel, errors. Each parses, calls one use case, and shapes the answer.
import Router from "@koa/router";
import type { Context } from "koa";
import type { CrawlRecord } from "../../pipeline/store/crawl-store.ts";
import type { CrawlRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { cancelError, invalidJobId, invalidPagination, jobExpired, jobNotFound, methodNotAllowed } from "../errors.ts";
import { checkWebhookUrl } from "../webhook-url.ts";
import { publicBase, withScreenshotBase } from "../public-url.ts";
import { validateBody } from "../validate.ts";
import { checkStartUrl, checkWebhook } from "../../pipeline/url/start-url.ts";
import { crawlOptions, webhookSetting } from "../../pipeline/usecases/request-options.ts";
import { claimIdempotencyKey } from "../idempotency.ts";
import { crawlErrors, crawlStatus, findCrawl } from "../../pipeline/usecases/crawl-status.ts";
import { cancelCrawl, submitCrawl } from "../../pipeline/usecases/submit-crawl.ts";
import { UNLIMITED } from "../../pipeline/usecases/credit-reservations.ts";
import { crawlParamsFromPrompt, mergePromptOptions, NO_LLM, type GeneratedParams } from "../../pipeline/usecases/crawl-prompt.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DEFAULT_PAGE_DOCS = 100;
/** /v2/crawl/active and /v2/crawl/ongoing list the running crawls (GET only); they are not crawl ids */
const LISTS = ["active", "ongoing"];
/** Fixed paths under /v2/crawl/ and their methods: another method there is a 405, not a lookup of a crawl id */
const FIXED: Record<string, string[]> = { active: ["GET", "HEAD"], ongoing: ["GET", "HEAD"], "params-preview": ["POST"] };
function notAnId(ctx: Context, base: string): void {
  const allowed = base === "/v2/crawl" ? FIXED[String(ctx.params.id)] : undefined;
  if (allowed && !allowed.includes(ctx.method)) throw methodNotAllowed(ctx, allowed);
}

/** The `:id` of the path, which must be a UUID. */
export function jobId(ctx: Context): string {
  const id = String(ctx.params.id);
  if (!UUID.test(id)) throw invalidJobId();
  return id;
}

/** `skip` and `limit` query parameters, strictly parsed (digits only; limit 1..1000). */
export function pagination(query: Record<string, string | string[] | undefined>): { skip: number; limit?: number } {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw invalidPagination(`${name} must be given once`);
    return v;
  };
  const skipRaw = one("skip");
  const limitRaw = one("limit");
  if (skipRaw !== undefined && !/^\d+$/.test(skipRaw)) throw invalidPagination("skip must be a non-negative integer without trailing characters");
  const skip = skipRaw === undefined ? 0 : Number(skipRaw);
  if (!Number.isSafeInteger(skip)) throw invalidPagination("skip is too large");
  if (limitRaw === undefined) return { skip };
  if (!/^\d+$/.test(limitRaw)) throw invalidPagination("limit must be a positive integer without trailing characters");
  const limit = Number(limitRaw);
  if (limit < 1 || limit > 1000) throw invalidPagination("limit must be between 1 and 1000");
  return { skip, limit };
}

/**
 * Status (paged), cancel and errors of a job under `base` (/v2/crawl or /v2/batch/scrape: the same store, the same
 * shapes, as the anchor serves both from one controller).
 */
export function jobRoutes(router: Router, deps: ApiDeps, base: string): void {
  const { config, store, clock } = deps;

  /** The caller's job, or the anchor's 404. */
  async function readable(ctx: Context, id: string): Promise<CrawlRecord> {
    const crawl = await findCrawl(store, id, ctx.state.teamId, clock.now());
    if (crawl === "missing") throw jobNotFound();
    if (crawl === "expired") throw jobExpired();
    return crawl;
  }

  router.get(`${base}/:id`, async (ctx) => {
    notAnId(ctx, base);
    const id = jobId(ctx);
    const { skip, limit } = pagination(ctx.query);
    const origin = publicBase(ctx, config.trustProxy);
    const load = async () => {
      const crawl = await readable(ctx, id);
      const { head, docs, nextSkip } = await crawlStatus(store, crawl, clock.now(), { skip, limit: limit ?? DEFAULT_PAGE_DOCS, maxBytes: config.statusChunkMaxBytes }, deps.snapshots);
      if (nextSkip !== undefined) head.next = `${origin}${base}/${id}?skip=${nextSkip}${limit !== undefined ? `&limit=${limit}` : ""}`;
      // documents are stored as JSON text: splice them in without parsing
      return `${JSON.stringify(head).slice(0, -1)},"data":[${docs.join(",")}]}`;
    };
    const key = [ctx.state.teamId, base, id, skip, limit ?? "", origin].join("\n");
    const body = deps.statusCache ? await deps.statusCache.get(id, key, load) : await load();
    ctx.type = "application/json";
    ctx.body = body;
  });

  router.delete(`${base}/:id`, async (ctx) => {
    // /v2/crawl/active and /ongoing are lists (GET only), not crawl ids
    notAnId(ctx, base);
    const id = jobId(ctx);
    const crawl = await store.getCrawl(id);
    if (!crawl || crawl.teamId !== ctx.state.teamId) throw cancelError(404, "Job not found");
    if (crawl.status !== "cancelled") {
      if (crawl.status !== "scraping") throw cancelError(409, "Crawl is already completed");
      await cancelCrawl(deps, id);
      deps.statusCache?.invalidate(id);
    }
    ctx.body = { status: "cancelled" };
  });

  router.get(`${base}/:id/errors`, async (ctx) => {
    const id = jobId(ctx);
    await readable(ctx, id);
    ctx.body = await crawlErrors(store, id);
  });
}

export function crawlRoutes(deps: ApiDeps): Router {
  const { config, store } = deps;
  const router = new Router();

  router.post("/v2/crawl", async (ctx) => {
    let body = validateBody<CrawlRequest>("crawl-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    checkWebhookUrl(body.webhook);
    checkWebhook(body.webhook, config.allowLocalWebhooks);
    let generated: GeneratedParams | undefined;
    if (body.prompt && deps.llm) {
      generated = await crawlParamsFromPrompt(deps.llm, url, body.prompt, deps.log);
      body = mergePromptOptions(body, generated);
    }
    const options = withScreenshotBase(ctx, config, crawlOptions(body, config.defaultCrawlLimit, config.crawlMaxPages));
    // web archives (a Trawl extension): the request's warc, else WARC_DEFAULT
    if (body.warc ?? config.warcDefault) options.warc = true;
    // credits: the limit lowered to the credits left, which become the crawl's budget (held until its record is written)
    const held = (await deps.access?.admitJob(ctx.state.teamId, options)) ?? UNLIMITED;
    if (body.prompt && !generated) options.promptNotApplied = `The prompt was not applied: ${NO_LLM}; the crawl runs with the options as sent.`;
    const webhook = webhookSetting(body.webhook, config.defaultWebhookUrl);
    let id: string;
    try {
      await claimIdempotencyKey(ctx, deps);
      id = await submitCrawl(deps, { url, options, teamId: ctx.state.teamId, webhook });
    } finally {
      await held.settle(0);
    }
    ctx.body = { success: true, id, url: `${publicBase(ctx, config.trustProxy)}/v2/crawl/${id}`, ...(generated ? { promptGeneratedOptions: generated, finalCrawlerOptions: options } : {}) };
  });

  router.post("/v2/crawl/params-preview", async (ctx) => {
    const body = validateBody<{ url: string; prompt: string }>("params-preview-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    const data = await crawlParamsFromPrompt(deps.llm, url, body.prompt, deps.log);
    ctx.body = { success: true, data: { url, ...data } };
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

  jobRoutes(router, deps, "/v2/crawl");

  return router;
}
