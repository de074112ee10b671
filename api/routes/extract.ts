// POST /v2/extract (an async job) and GET /v2/extract/:id.
import Router from "@koa/router";
import type { ExtractRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { jobNotFound } from "../errors.ts";
import { validateBody } from "../validate.ts";
import { jobId } from "./crawl.ts";
import { readExtract, startExtract } from "../../pipeline/usecases/extract-job.ts";

export function extractRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const jobDeps = { ...deps, allowPrivate: deps.config.allowPrivateCrawlTargets, fetchTimeoutMs: deps.config.fetchTimeoutMs };

  router.post("/v2/extract", async (ctx) => {
    const body = validateBody<ExtractRequest>("extract-request", ctx.state.body);
    const id = await startExtract(jobDeps, body, ctx.state.teamId);
    ctx.body = { success: true, id, urlTrace: [] };
  });

  router.get("/v2/extract/:id", async (ctx) => {
    const id = jobId(ctx);
    const state = await readExtract(deps, ctx.state.teamId, id);
    if (!state) throw jobNotFound();
    ctx.body = {
      success: state.status !== "failed",
      id,
      status: state.status,
      data: state.data ?? null,
      expiresAt: new Date(state.expiresAt).toISOString(),
      tokensUsed: state.tokensUsed,
      ...(state.showSources && state.sources ? { sources: state.sources } : {}),
      ...(state.error ? { error: state.error } : {}),
      ...(state.warning ? { warning: state.warning } : {}),
    };
  });

  return router;
}
