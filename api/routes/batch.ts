// /v2/batch/scrape routes: submit (or append), status (paged like a crawl), cancel, errors. A batch is a job of kind
// "batch" in the crawl store; the WebSocket watch of api/ws.ts serves /v2/batch/scrape/:id too.
import Router from "@koa/router";
import type { BatchScrapeRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError, jobNotFound } from "../errors.ts";
import { claimIdempotencyKey } from "../idempotency.ts";
import { publicBase, withScreenshotBase } from "../public-url.ts";
import { validateBody } from "../validate.ts";
import { jobRoutes } from "./crawl.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { batchOptions, checkJobFields, checkPageLimit, webhookSetting } from "../../pipeline/usecases/request-options.ts";
import { appendToBatch, submitBatch } from "../../pipeline/usecases/submit-batch.ts";
import { UNLIMITED } from "../../pipeline/usecases/credit-reservations.ts";
import { RequestError, type RequestIssue } from "../../pipeline/runtime/errors.ts";

/** Each URL checked as a scrape's; invalid ones are dropped and listed (ignoreInvalidURLs, default true) or refused. */
function checkUrls(urls: string[], ignoreInvalid: boolean, allowPrivate: boolean): { valid: string[]; invalid: string[] } {
  const valid: string[] = [];
  const invalid: string[] = [];
  const issues: RequestIssue[] = [];
  urls.forEach((raw, i) => {
    try {
      valid.push(checkStartUrl(raw, allowPrivate));
    } catch (err) {
      if (!(err instanceof RequestError)) throw err;
      invalid.push(raw);
      issues.push({ code: "custom", path: ["urls", i], message: err.message });
    }
  });
  if (!ignoreInvalid && issues.length > 0) throw new RequestError(issues[0]?.message ?? "Invalid URL", issues.slice(0, 100));
  return { valid, invalid };
}

export function batchRoutes(deps: ApiDeps): Router {
  const { config, store } = deps;
  const router = new Router();

  router.post("/v2/batch/scrape", async (ctx) => {
    const batch = validateBody<BatchScrapeRequest>("batch-scrape-request", ctx.state.body);
    const { urls: _urls, webhook: _webhook, appendToId: _append, ignoreInvalidURLs: _ignore, maxConcurrency: _mc, zeroDataRetention: _zdr, origin: _origin, integration: _integration, ...page } = batch;
    checkJobFields(batch);
    const { valid, invalid } = checkUrls(batch.urls, batch.ignoreInvalidURLs ?? true, config.allowPrivateCrawlTargets);
    if (valid.length === 0) throw new RequestError("No valid URLs to scrape", [{ code: "custom", path: ["urls"], message: "Every URL of the batch is invalid" }]);
    checkPageLimit(valid.length, config.crawlMaxPages, ["urls"], (n) => `a batch of ${n} URLs`);
    const options = withScreenshotBase(ctx, config, batchOptions(page, valid.length, batch.maxConcurrency));
    // web archives (a Trawl extension): the request's warc, else WARC_DEFAULT
    if (batch.warc ?? config.warcDefault) options.warc = true;
    const webhook = webhookSetting(batch.webhook, config.defaultWebhookUrl);
    let id: string;
    if (batch.appendToId !== undefined) {
      // credits: at least one per URL (402 when the team has too few), up to CREDIT_BUDGET_PER_PAGE each; the frontier
      // raises the batch's budget by them (the appended pages are billed within it), and they are held until its
      // record shows the raise
      const held = (await deps.access?.appendBudget(ctx.state.teamId, valid.length)) ?? UNLIMITED;
      let raise: number | undefined;
      try {
        const target = await store.getCrawl(batch.appendToId);
        if (!target || target.teamId !== ctx.state.teamId || target.options.kind !== "batch") throw jobNotFound();
        if (target.status !== "scraping") throw apiError(409, `The batch scrape ${batch.appendToId} has already ended (${target.status}); URLs can only be appended to a running batch`);
        checkPageLimit(target.total + valid.length, config.crawlMaxPages, ["urls"], (n) => `the batch with these URLs appended (${n} URLs)`);
        await claimIdempotencyKey(ctx, deps);
        const budget = target.options.maxCredits;
        if (budget !== undefined && held.credits !== Infinity) raise = budget + held.credits;
        await appendToBatch(deps, batch.appendToId, valid, raise !== undefined ? held.credits : undefined);
      } finally {
        // sent (or maybe sent) with a raise: held until the batch's record has it; else nothing to hold
        if (raise !== undefined) deps.access?.appended(batch.appendToId, held, raise);
        else await held.settle(0);
      }
      id = batch.appendToId;
    } else {
      // credits: one per URL at least (402 when the team has too few); the credits left become the batch's budget,
      // held until its record is written
      const held = (await deps.access?.admitJob(ctx.state.teamId, options, valid.length)) ?? UNLIMITED;
      try {
        await claimIdempotencyKey(ctx, deps);
        id = await submitBatch(deps, { urls: valid, options, teamId: ctx.state.teamId, webhook });
      } finally {
        await held.settle(0);
      }
    }
    ctx.body = { success: true, id, url: `${publicBase(ctx, config.trustProxy)}/v2/batch/scrape/${id}`, ...(invalid.length > 0 ? { invalidURLs: invalid } : {}) };
  });

  jobRoutes(router, deps, "/v2/batch/scrape");

  return router;
}
