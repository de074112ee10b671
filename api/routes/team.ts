// GET /v2/team/credit-usage, /v2/team/token-usage (and their /historical), /v2/team/queue-status,
// /v2/concurrency-check: all for the caller's team.
import Router from "@koa/router";
import type { ApiDeps } from "../deps.ts";
import { checkByApiKey, concurrency, creditUsage, queueStatus, tokenUsage, usageHistory } from "../../pipeline/usecases/team-usage.ts";

export function teamRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const maxConcurrency = deps.config.fetchConcurrency;

  router.get("/v2/team/credit-usage", async (ctx) => {
    ctx.body = { success: true, data: await creditUsage(deps, String(ctx.state.teamId)) };
  });
  router.get("/v2/team/token-usage", async (ctx) => {
    ctx.body = { success: true, data: await tokenUsage(deps, String(ctx.state.teamId)) };
  });
  for (const [path, field] of [["/v2/team/credit-usage/historical", "credits"], ["/v2/team/token-usage/historical", "tokens"]] as const) {
    router.get(path, async (ctx) => {
      checkByApiKey(ctx.query.byApiKey);
      ctx.body = { success: true, periods: await usageHistory(deps, String(ctx.state.teamId), field) };
    });
  }
  router.get("/v2/team/queue-status", async (ctx) => {
    ctx.body = { success: true, ...(await queueStatus(deps, String(ctx.state.teamId), maxConcurrency)) };
  });
  router.get("/v2/concurrency-check", async (ctx) => {
    ctx.body = { success: true, ...(await concurrency(deps, String(ctx.state.teamId), maxConcurrency)) };
  });

  return router;
}
