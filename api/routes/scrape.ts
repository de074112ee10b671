// POST /v2/scrape (synchronous, the same fetch -> convert use case as the crawl stages) and GET /v2/scrape/:id.
import Router from "@koa/router";
import type { ScrapeRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../app.ts";
import { HttpError, jobNotFound } from "../errors.ts";
import { checkStartUrl } from "../start-url.ts";
import { validateBody } from "../validate.ts";
import { scrapeSettings } from "./crawl.ts";
import { scrapePage } from "../../pipeline/usecases/scrape-page.ts";
import { errorCode, errorMessage, PageError } from "../../pipeline/runtime/errors.ts";
import { scrapeJobId } from "../../pipeline/runtime/constants.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Scrape results live in the document store under this pseudo crawl id, served for 24 h like crawl results. */

export function scrapeRoutes(deps: ApiDeps): Router {
  const { config, store, clock, fetcher, convert, cache } = deps;
  const router = new Router();

  router.post("/v2/scrape", async (ctx) => {
    const body = validateBody<ScrapeRequest>("scrape-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    const { url: _url, origin: _origin, integration: _integration, zeroDataRetention: _zdr, ...options } = body;
    const settings = scrapeSettings(options, []);
    const timeoutMs = settings.timeoutMs ?? config.fetchTimeoutMs;
    let converted;
    try {
      converted = await scrapePage({ fetcher, convert, cache }, url, settings, timeoutMs);
    } catch (err) {
      if (!(err instanceof PageError)) throw err;
      const status = err.code === "SCRAPE_TIMEOUT" ? 408 : 500;
      throw new HttpError(status, { success: false, code: errorCode(err), error: errorMessage(err) });
    }
    const { document, credits } = converted;
    const scrapeId = String(document.metadata.scrapeId);
    await store.insertDocuments([{
      crawlId: scrapeJobId(scrapeId), seq: 0, urlKey: scrapeId, finalKey: scrapeId, scrapeId, url: String(document.metadata.url),
      statusCode: Number(document.metadata.statusCode), credits, storedAt: clock.now(), doc: JSON.stringify(document),
    }]);
    deps.log.info({ scrapeId, url, credits }, "scraped");
    ctx.body = { success: true, data: document };
  });

  router.get("/v2/scrape/:id", async (ctx) => {
    const id = String(ctx.params.id);
    if (!UUID.test(id)) throw new HttpError(400, { success: false, error: "Invalid job ID format. Job ID must be a valid UUID." });
    const page = await store.pageDocuments(scrapeJobId(id), 0, Number.MAX_SAFE_INTEGER, 1);
    if (page.docs.length === 0) throw jobNotFound();
    ctx.type = "application/json";
    ctx.body = `{"success":true,"data":${page.docs[0]}}`;
  });

  return router;
}
