// GET /v2/screenshots/:job/:file — a screenshot stored with SCREENSHOTS=url, as image/png or image/jpeg.
import Router from "@koa/router";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { jobId } from "./crawl.ts";
import { readScreenshot } from "../../pipeline/usecases/screenshot.ts";

const FILE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(png|jpeg)$/;

export function screenshotRoutes(deps: ApiDeps): Router {
  const router = new Router();
  router.get("/v2/screenshots/:id/:file", async (ctx) => {
    const notFound = () => apiError(404, "Screenshot not found");
    const file = FILE.exec(String(ctx.params.file));
    const job = jobId(ctx);
    if (!file || !deps.screenshots) throw notFound();
    const shot = await readScreenshot({ store: deps.store, screenshots: deps.screenshots }, ctx.state.teamId, job, String(file[1]), deps.clock.now());
    if (!shot || shot.type !== file[2]) throw notFound();
    ctx.type = `image/${shot.type}`;
    ctx.set("cache-control", "private, max-age=3600");
    ctx.body = shot.bytes;
  });
  return router;
}
