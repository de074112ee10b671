// GET /v2/crawl/:id/urls (every URL the crawl saw, with its state and reason; paged like the status) and
// GET /v2/crawl/:id/urls/explain?url= (one URL, also one the crawl never reached). Another team's crawl is a 404.
import Router from "@koa/router";
import type { Context } from "koa";
import type { ApiDeps } from "../deps.ts";
import { apiError, jobExpired, jobNotFound } from "../errors.ts";
import { publicBase } from "../public-url.ts";
import { findCrawl } from "../../pipeline/usecases/crawl-status.ts";
import { crawlUrlPage, explainUrl, URL_STATES } from "../../pipeline/usecases/crawl-urls.ts";
import { isUrlReason } from "../../pipeline/store/url-reason.ts";
import { resolveLink } from "../../pipeline/url/normalize-url.ts";
import type { CrawlRecord } from "../../pipeline/store/crawl-store.ts";
import { jobId, pagination } from "./crawl.ts";

const DEFAULT_PAGE_URLS = 100;

const badQuery = (error: string) => apiError(400, error, { code: "BAD_REQUEST" });

function single(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw badQuery(`${name} must be given once`);
  return v === "" ? undefined : v;
}

export function crawlUrlRoutes(deps: ApiDeps): Router {
  const { store, clock, config } = deps;
  const router = new Router();

  async function readable(ctx: Context): Promise<CrawlRecord> {
    const crawl = await findCrawl(store, jobId(ctx), ctx.state.teamId, clock.now());
    if (crawl === "missing") throw jobNotFound();
    if (crawl === "expired") throw jobExpired();
    return crawl;
  }

  router.get("/v2/crawl/:id/urls", async (ctx) => {
    const { skip, limit = DEFAULT_PAGE_URLS } = pagination(ctx.query);
    const state = single(ctx, "status");
    const reason = single(ctx, "reason");
    if (state !== undefined && !(URL_STATES as readonly string[]).includes(state)) throw badQuery(`status must be one of ${URL_STATES.join(", ")}`);
    if (reason !== undefined && !isUrlReason(reason)) throw badQuery(`unknown reason ${JSON.stringify(reason)}`);
    const crawl = await readable(ctx);
    const { unlisted, ...page } = await crawlUrlPage(store, crawl, { state, reason, skip, limit });
    let next: string | undefined;
    if (page.nextSkip !== undefined) {
      const q = new URLSearchParams({ ...(state ? { status: state } : {}), ...(reason ? { reason } : {}), skip: String(page.nextSkip), limit: String(limit) });
      next = `${publicBase(ctx, config.trustProxy)}/v2/crawl/${crawl.crawlId}/urls?${q}`;
    }
    ctx.body = { success: true, status: crawl.status, total: page.total, counts: crawl.reasons ?? {}, unlisted, data: page.data, ...(next ? { next } : {}) };
  });

  router.get("/v2/crawl/:id/urls/explain", async (ctx) => {
    const given = single(ctx, "url");
    if (given === undefined) throw badQuery("url is required");
    const url = resolveLink(given);
    if (!url) throw badQuery("url must be an absolute http(s) URL");
    const crawl = await readable(ctx);
    const { seen, entry, explanation } = await explainUrl(store, crawl, url);
    ctx.body = { success: true, url, seen, explanation, entry };
  });

  return router;
}
