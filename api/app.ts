// createApp(deps): the Koa app, without listening. Routes validate against schemas/; errors map in errors.ts.
import Koa from "koa";
import Router from "@koa/router";
import type { ApiDeps } from "./deps.ts";
import { authMiddleware, RateLimiter } from "./auth.ts";
import { jsonBody } from "./body.ts";
import { errorMiddleware, routeNotFound } from "./errors.ts";
import { crawlRoutes } from "./routes/crawl.ts";
import { scrapeRoutes } from "./routes/scrape.ts";
import { batchRoutes } from "./routes/batch.ts";
import { extractRoutes } from "./routes/extract.ts";
import { adminRoutes } from "./routes/admin.ts";
import { adminKeyRoutes } from "./routes/admin-keys.ts";

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
  app.use(authMiddleware(deps.access, new RateLimiter(() => deps.clock.now())));
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
  const crawl = crawlRoutes({ ...deps, log });
  app.use(health.routes());
  app.use(crawl.routes());
  app.use(crawl.allowedMethods());
  app.use(adminRoutes({ ...deps, log }).routes());
  app.use(adminKeyRoutes({ ...deps, log }).routes());
  const batch = batchRoutes({ ...deps, log });
  app.use(batch.routes());
  app.use(batch.allowedMethods());
  const scrape = scrapeRoutes({ ...deps, log });
  app.use(scrape.routes());
  app.use(scrape.allowedMethods());
  const extract = extractRoutes({ ...deps, log });
  app.use(extract.routes());
  app.use(extract.allowedMethods());
  app.use((ctx) => {
    throw routeNotFound(ctx.method, ctx.path);
  });
  return app;
}
