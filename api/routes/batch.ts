// /v2/batch/scrape: a batch scrape is a job through the same stages as a crawl, with the given URLs and no link
// following (options.kind "batch"). POST validates, stores and queues (no fetch on the request path); status, cancel
// and errors are the crawl's handlers under this path.
import Router from "@koa/router";
import type { BatchScrapeRequest, CrawlOptions } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { publicBase } from "../public-url.ts";
import { validateBody } from "../validate.ts";
import { jobRoutes } from "./crawl.ts";
import { invalidField, RequestError } from "../../pipeline/runtime/errors.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { refuseZeroDataRetention, scrapeSettings } from "../../pipeline/usecases/request-options.ts";
import { submitCrawl } from "../../pipeline/usecases/submit-crawl.ts";

/** The valid URLs of a batch, and the invalid ones (refused unless ignoreInvalidURLs). */
export function batchUrls(urls: string[], allowPrivate: boolean, ignoreInvalid: boolean): { valid: string[]; invalid: string[] } {
  const valid: string[] = [];
  const invalid: string[] = [];
  urls.forEach((raw, i) => {
    try {
      valid.push(checkStartUrl(raw, allowPrivate));
    } catch (err) {
      if (!(err instanceof RequestError) || !ignoreInvalid) throw err instanceof RequestError ? invalidField(["urls", i], `${err.message}: ${raw}`) : err;
      invalid.push(raw);
    }
  });
  if (valid.length === 0) throw invalidField(["urls"], "No valid URL to scrape");
  return { valid, invalid };
}

export function batchRoutes(deps: ApiDeps): Router {
  const { config } = deps;
  const router = new Router();

  router.post("/v2/batch/scrape", async (ctx) => {
    const body = validateBody<BatchScrapeRequest>("batch-scrape-request", ctx.state.body);
    const { urls, webhook, appendToId, ignoreInvalidURLs, maxConcurrency, zeroDataRetention, origin: _origin, integration: _integration, ...page } = body;
    if (appendToId !== undefined) throw invalidField(["appendToId"], "appendToId is not supported by this server: start a new batch scrape with the other URLs");
    refuseZeroDataRetention(zeroDataRetention);
    const { valid, invalid } = batchUrls(urls, config.allowPrivateCrawlTargets, ignoreInvalidURLs === true);
    const options: CrawlOptions = {
      ...scrapeSettings(page, []),
      kind: "batch", limit: valid.length, crawlEntireDomain: false, allowSubdomains: false, sitemap: "skip", ignoreRobotsTxt: true,
      ...(maxConcurrency !== undefined ? { maxConcurrency } : {}),
    };
    await deps.access?.admit(ctx.state.teamId, valid.length);
    const id = await submitCrawl(deps, { url: valid[0] as string, urls: valid, options, teamId: ctx.state.teamId, webhook: webhook === undefined ? "" : JSON.stringify(webhook) });
    ctx.body = { success: true, id, url: `${publicBase(ctx, config.trustProxy)}/v2/batch/scrape/${id}`, ...(ignoreInvalidURLs ? { invalidURLs: invalid } : {}) };
  });

  jobRoutes(router, deps, "/v2/batch/scrape");
  return router;
}
