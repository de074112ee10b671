// GET /v2/team/credit-usage, /v2/team/token-usage, /v2/team/queue-status, /v2/concurrency-check.
import Router from "@koa/router";
import type { ApiDeps } from "../deps.ts";
import { concurrency, creditUsage, queueStatus, tokenUsage } from "../../pipeline/usecases/team-usage.ts";

export function teamRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const maxConcurrency = deps.config.fetchConcurrency;

  router.get("/v2/team/credit-usage", async (ctx) => {
    ctx.body = { success: true, data: await creditUsage(deps, String(ctx.state.teamId)) };
  });
  router.get("/v2/team/token-usage", async (ctx) => {
    ctx.body = { success: true, data: await tokenUsage() };
  });
  router.get("/v2/team/queue-status", async (ctx) => {
    ctx.body = { success: true, ...(await queueStatus(deps, maxConcurrency)) };
  });
  router.get("/v2/concurrency-check", async (ctx) => {
    ctx.body = { success: true, ...(await concurrency(deps, maxConcurrency)) };
  });

  return router;
}
