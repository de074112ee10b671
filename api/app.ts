// createApp(deps): the Koa app, without listening. Routes validate against schemas/; errors map in errors.ts.
import Koa from "koa";
import Router from "@koa/router";
import type { ApiDeps } from "./deps.ts";
import { authMiddleware, RateLimiter } from "./auth.ts";
import { jsonBody } from "./body.ts";
import { errorMiddleware, methodNotAllowed, routeNotFound } from "./errors.ts";
import { crawlRoutes } from "./routes/crawl.ts";
import { scrapeRoutes } from "./routes/scrape.ts";
import { parseRoutes } from "./routes/parse.ts";
import { batchRoutes } from "./routes/batch.ts";
import { extractRoutes } from "./routes/extract.ts";
import { adminRoutes } from "./routes/admin.ts";
import { crawlUrlRoutes } from "./routes/crawl-urls.ts";
import { adminKeyRoutes } from "./routes/admin-keys.ts";
import { redactPath } from "./admin-key.ts";
import { corsMiddleware, parseCorsOrigins } from "./cors.ts";
import { openApiRoutes } from "./routes/openapi.ts";
import { mapRoutes } from "./routes/map.ts";
import { searchRoutes } from "./routes/search.ts";
import { teamRoutes } from "./routes/team.ts";
import { screenshotRoutes } from "./routes/screenshot.ts";
import { warcRoutes } from "./routes/warc.ts";
import { monitorRoutes } from "./routes/monitor.ts";
import { healthBody } from "../pipeline/runtime/metrics.ts";

export function createApp(deps: ApiDeps): Koa {
  const app = new Koa({ proxy: deps.config.trustProxy });
  const log = deps.log.child({ component: "api" });
  app.use(async (ctx, next) => {
    const started = performance.now();
    await next();
    log.debug({ method: ctx.method, path: redactPath(ctx.path), status: ctx.status, ms: Math.round(performance.now() - started) }, "request");
  });
  app.use(corsMiddleware(parseCorsOrigins(deps.config.corsAllowedOrigins)));
  app.use(errorMiddleware(log));
  app.use(authMiddleware(deps.access, new RateLimiter(() => deps.clock.now()), deps.config.trustProxy));
  app.use(jsonBody);

  const health = new Router();
  health.get("/health", (ctx) => {
    ctx.body = healthBody(deps.storeReplicas?.());
  });
  health.get("/ready", async (ctx) => {
    const ok = await deps.ready().catch(() => false);
    ctx.status = ok ? 200 : 503;
    // the browser is reported, not required: without it only the pages that need one are affected
    const browser = deps.renderer?.status() ?? { available: false, reason: "RENDER=never" };
    ctx.body = { status: ok ? "ready" : "not ready", renderer: { mode: deps.renderMode ?? "never", available: browser.available, ...(browser.reason ? { reason: browser.reason } : {}) } };
  });
  const metrics = deps.metrics;
  if (metrics) {
    // Prometheus scrapes this process's metrics here (every role of the process, api included)
    health.get("/metrics", async (ctx) => {
      ctx.type = metrics.contentType;
      ctx.body = await metrics.text();
    });
  }
  // every router of the API (api/openapi/routes.ts documents each of their routes; a unit test compares the two)
  const routers = [
    health, crawlRoutes({ ...deps, log }), crawlUrlRoutes({ ...deps, log }), adminRoutes({ ...deps, log }), adminKeyRoutes({ ...deps, log }), openApiRoutes(),
    mapRoutes({ ...deps, log }), searchRoutes({ ...deps, log }), teamRoutes({ ...deps, log }),
    batchRoutes({ ...deps, log }), scrapeRoutes({ ...deps, log }), parseRoutes({ ...deps, log }), extractRoutes({ ...deps, log }), screenshotRoutes(deps),
    monitorRoutes({ ...deps, log }), warcRoutes(deps),
  ];
  for (const router of routers) app.use(router.routes());
  app.use((ctx) => {
    // a known path asked with another method: 405 and the methods it has (a 404 would say the resource is missing)
    // a static path (/v2/crawl/active) is its own resource: a parameter route that also matches it (/v2/crawl/:id) is not
    const layers = routers.flatMap((r) => r.match(ctx.path, ctx.method).path);
    const exact = layers.filter((layer) => layer.path === ctx.path);
    const allowed = new Set((exact.length > 0 ? exact : layers).flatMap((layer) => layer.methods));
    if (allowed.size > 0) throw methodNotAllowed(ctx, [...allowed]);
    throw routeNotFound(ctx.method, ctx.path);
  });
  return app;
}
