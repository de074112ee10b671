// Web archives of a job run with `warc: true` (a Trawl extension), under /v2/crawl/:id and /v2/batch/scrape/:id:
// GET …/warc lists the WARC files, GET …/warc/:name serves one (Range requests: a reader fetches one record by the
// CDXJ offset and length), GET …/cdxj the job's index (one line per URL, sorted by SURT key). Only to the job's team,
// and for WARC_RETENTION_HOURS after the archives' last record (the job's record may have expired by then: the team
// is then read from the archives' owner file).
import { createReadStream } from "node:fs";
import Router from "@koa/router";
import type { Context } from "koa";
import type { ApiDeps } from "../deps.ts";
import { apiError, HttpError, jobExpired, jobNotFound } from "../errors.ts";
import { publicBase } from "../public-url.ts";
import { jobId } from "./crawl.ts";

const BASES = ["/v2/crawl", "/v2/batch/scrape"];

/** `bytes=a-b`, `bytes=a-`, `bytes=-n` over a file of `size` bytes: [start, end] inclusive, "bad" when unsatisfiable, null for the whole file. */
export function byteRange(header: string | undefined, size: number): [number, number] | "bad" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null; // several ranges or another unit: the whole file (RFC 9110 allows it)
  if (m[1] === "") {
    const n = Number(m[2]);
    return n === 0 || size === 0 ? "bad" : [Math.max(0, size - n), size - 1];
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  return start >= size || end < start ? "bad" : [start, end];
}

export function warcRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const { warc, store, clock, config } = deps;

  /** The caller's job with archives, or the anchor's 404. */
  async function archived(ctx: Context): Promise<string> {
    const id = jobId(ctx);
    if (!warc) throw jobNotFound();
    const crawl = await store.getCrawl(id);
    const teamId = crawl ? crawl.teamId : (await warc.owner(id))?.teamId;
    if (teamId === undefined || teamId !== ctx.state.teamId) throw jobNotFound();
    const last = await warc.lastWritten(id);
    if (last === 0) throw apiError(404, "This job has no web archives (submit it with \"warc\": true)");
    if (crawl?.status !== "scraping" && last + config.warcRetentionHours * 3_600_000 < clock.now()) throw jobExpired();
    return id;
  }

  for (const base of BASES) {
    router.get(`${base}/:id/warc`, async (ctx) => {
      const id = await archived(ctx);
      const origin = publicBase(ctx, config.trustProxy);
      const files = await warc!.files(id);
      ctx.body = { success: true, files: files.map((f) => ({ ...f, url: `${origin}${base}/${id}/warc/${f.name}` })) };
    });

    router.get(`${base}/:id/warc/:name`, async (ctx) => {
      const id = await archived(ctx);
      const file = await warc!.filePath(id, String(ctx.params.name));
      if (!file) throw apiError(404, "No such WARC file in this job");
      ctx.set("accept-ranges", "bytes");
      ctx.set("cache-control", "private, max-age=60");
      ctx.type = "application/warc";
      const range = byteRange(ctx.get("range") || undefined, file.bytes);
      if (range === "bad") throw new HttpError(416, { success: false, error: "Range not satisfiable" }, { "content-range": `bytes */${file.bytes}` });
      if (range) {
        ctx.status = 206;
        ctx.set("content-range", `bytes ${range[0]}-${range[1]}/${file.bytes}`);
        ctx.length = range[1] - range[0] + 1;
        ctx.body = createReadStream(file.path, { start: range[0], end: range[1] });
        return;
      }
      ctx.length = file.bytes;
      ctx.body = createReadStream(file.path);
    });

    router.get(`${base}/:id/cdxj`, async (ctx) => {
      const id = await archived(ctx);
      ctx.type = "text/x-cdxj; charset=utf-8";
      ctx.body = (await warc!.cdxj(id)).join("");
    });
  }
  return router;
}
