// createApp(deps): the Koa app, without listening. Routes validate against schemas/; errors map in errors.ts.
import Koa from "koa";
import Router from "@koa/router";
import type { Bus } from "../pipeline/runtime/bus.ts";
import type { Clock } from "../pipeline/runtime/clock.ts";
import type { Config } from "../pipeline/runtime/config.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { jsonBody } from "./body.ts";
import { errorMiddleware, HttpError, methodNotAllowed } from "./errors.ts";
import { crawlRoutes } from "./routes/crawl.ts";
import { scrapeRoutes } from "./routes/scrape.ts";
import type { Fetcher } from "../pipeline/fetch-render/fetcher.ts";
import type { Converter } from "../pipeline/convert/converter.ts";
import type { CacheDeps } from "../pipeline/fetch-render/cached-fetch.ts";
import type { QueueStat } from "../pipeline/runtime/bus.ts";
import { adminRoutes } from "./routes/admin.ts";
import { openApiRoutes } from "./routes/openapi.ts";

export interface ApiDeps {
  config: Config;
  store: CrawlStore;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** Readiness of the dependencies (store reachable, bus connected). */
  ready: () => Promise<boolean>;
  /** For the synchronous single-page scrape. */
  fetcher: Fetcher;
  /** Conversion for POST /v2/scrape: the worker pool of this process (off the event loop) */
  convert: Converter;
  /** maxAge / storeInCache of POST /v2/scrape */
  cache?: CacheDeps;
  /** For the queue admin UI. */
  queueStats?: () => Promise<QueueStat[]>;
}

/** Self-hosted without database authentication: every caller is the team "bypass". */
const TEAM_BYPASS = "bypass";

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const log = deps.log.child({ component: "api" });
  app.use(async (ctx, next) => {
    const started = performance.now();
    ctx.set("Access-Control-Allow-Origin", "*");
    ctx.set("Access-Control-Allow-Headers", "Authorization, Content-Type, x-idempotency-key");
    ctx.set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
    if (ctx.method === "OPTIONS") {
      ctx.status = 204;
      return;
    }
    await next();
    log.debug({ method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) }, "request");
  });
  app.use(errorMiddleware(log));
  app.use(async (ctx, next) => {
    ctx.state.teamId = TEAM_BYPASS;
    await next();
  });
  app.use(jsonBody);

  const health = new Router();
  health.get("/health", (ctx) => {
    ctx.body = { status: "ok" };
  });
  health.get("/ready", async (ctx) => {
    const ok = await deps.ready().catch(() => false);
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? "ready" : "not ready" };
  });
  const routers = [health, crawlRoutes({ ...deps, log }), adminRoutes({ ...deps, log }), openApiRoutes(), scrapeRoutes({ ...deps, log })];
  for (const router of routers) app.use(router.routes());
  app.use((ctx) => {
    // a known path asked with another method: 405 and the methods it has (a 404 would say the resource is missing)
    const allowed = new Set(routers.flatMap((r) => r.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods)));
    if (allowed.size > 0) throw methodNotAllowed(ctx, [...allowed]);
    throw new HttpError(404, { success: false, error: `Not found: ${ctx.method} ${ctx.path}` });
  });
  return app;
}
