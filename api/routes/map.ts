// POST /v2/map: parse, run the map use case, shape the answer.
import Router from "@koa/router";
import type { MapRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { validateBody } from "../validate.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { mapSite } from "../../pipeline/usecases/map-site.ts";
import { errorMessage, invalidField, PageError } from "../../pipeline/runtime/errors.ts";
import { billedLedger, UNLIMITED } from "../../pipeline/usecases/credit-reservations.ts";

export function mapRoutes(deps: ApiDeps): Router {
  const { config } = deps;
  const router = new Router();

  router.post("/v2/map", async (ctx) => {
    const body = validateBody<MapRequest>("map-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    if (body.location?.country !== undefined) {
      throw invalidField(["location", "country"], "location.country is not supported by this server (no proxies per country); location.languages is sent as Accept-Language");
    }
    const languages = body.location?.languages ?? [];
    const teamId = String(ctx.state.teamId);
    const held = (await deps.access?.reserve(teamId, 1)) ?? UNLIMITED; // 1 credit, held until billed
    try {
      const result = await mapSite({ ...deps, authStore: billedLedger(held, deps.authStore) }, {
        url,
        ...(body.search?.trim() ? { search: body.search } : {}),
        sitemap: body.sitemap ?? "include",
        includeSubdomains: body.includeSubdomains ?? true,
        ignoreQueryParameters: body.ignoreQueryParameters ?? true,
        limit: body.limit ?? 5000,
        ...(body.timeout !== undefined ? { timeoutMs: body.timeout } : {}),
        ...(languages.length ? { headers: { "accept-language": languages.join(", ") } } : {}),
        teamId,
        maxPages: config.mapMaxPages,
        maxSitemaps: config.maxSitemaps,
        sitemapMaxBytes: config.sitemapMaxBytes,
        fetchTimeoutMs: config.fetchTimeoutMs,
        robotsUserAgent: config.robotsUserAgent,
      });
      ctx.body = { success: true, id: result.id, links: result.links, ...(result.warning ? { warning: result.warning } : {}) };
    } catch (err) {
      if (err instanceof PageError && err.code === "MAP_TIMEOUT") throw apiError(408, `${errorMessage(err)}; try a longer timeout or a smaller limit`, { code: "MAP_TIMEOUT" });
      throw err;
    } finally {
      held.release();
    }
  });

  return router;
}
