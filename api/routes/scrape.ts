// POST /v2/scrape (synchronous, the same fetch -> convert use case as the crawl stages) and GET /v2/scrape/:id.
import { randomUUID } from "node:crypto";
import Router from "@koa/router";
import type { ScrapeRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError, jobNotFound } from "../errors.ts";
import { validateBody } from "../validate.ts";
import { publicBase } from "../public-url.ts";
import { jobId } from "./crawl.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { checkJobFields, scrapeSettings } from "../../pipeline/usecases/request-options.ts";
import { readScrape, scrapeAndStore } from "../../pipeline/usecases/scrape-page.ts";
import { documentTokens } from "../../pipeline/store/crawl-store.ts";
import { errorCode, errorMessage, PageError } from "../../pipeline/runtime/errors.ts";
import { UNLIMITED, withCreditCap } from "../../pipeline/usecases/credit-reservations.ts";

/** A lockdown scrape that found nothing in the cache costs 1 credit (Firecrawl's price of the lookup). */
const LOCKDOWN_MISS_CREDITS = 1;

/** The HTTP status of a scrape's page failure: 408 time-out, 404 cache-only miss (minAge, lockdown), else 500. */
function pageErrorStatus(code: string): number {
  if (code === "SCRAPE_TIMEOUT") return 408;
  if (code === "SCRAPE_NO_CACHED_DATA" || code === "SCRAPE_LOCKDOWN_CACHE_MISS") return 404;
  return 500;
}

export function scrapeRoutes(deps: ApiDeps): Router {
  const { config, store } = deps;
  const router = new Router();

  router.post("/v2/scrape", async (ctx) => {
    const body = validateBody<ScrapeRequest>("scrape-request", ctx.state.body);
    const url = checkStartUrl(body.url, config.allowPrivateCrawlTargets);
    const { url: _url, origin: _origin, integration: _integration, zeroDataRetention, ...options } = body;
    checkJobFields({ zeroDataRetention, integration: _integration });
    const settings = scrapeSettings(options, []);
    const teamId: string = ctx.state.teamId;
    // credits: 1 at least, reserved until billed; a PDF is parsed up to the pages the credits left pay for
    const held = (await deps.access?.reserve(teamId, 1)) ?? UNLIMITED;
    try {
      const base = config.screenshots === "url" ? publicBase(ctx, config.trustProxy) : undefined;
      const { document, credits: cost } = await scrapeAndStore(deps, teamId, url, withCreditCap(settings, held.credits), settings.timeoutMs ?? config.fetchTimeoutMs, base);
      // the ledger also counts scrapes with authentication off (GET /v2/team/credit-usage reports them)
      const tokens = documentTokens(document);
      const credits = await held.settle(cost, async (billed) => deps.authStore?.recordUsage([{ teamId, jobId: String(document.metadata.scrapeId), credits: billed, ...(tokens ? { tokens } : {}), at: deps.clock.now() }]));
      document.metadata.creditsUsed = credits;
      deps.log.info({ scrapeId: document.metadata.scrapeId, url, credits, tokens }, "scraped");
      ctx.body = { success: true, data: document };
    } catch (err) {
      if (!(err instanceof PageError)) throw err;
      if (err.code === "SCRAPE_LOCKDOWN_CACHE_MISS") {
        // Firecrawl bills a lockdown miss 1 credit (the lookup); the URL is not logged
        await held.settle(LOCKDOWN_MISS_CREDITS, async (billed) => deps.authStore?.recordUsage([{ teamId, jobId: randomUUID(), credits: billed, at: deps.clock.now() }]));
      }
      throw apiError(pageErrorStatus(err.code), errorMessage(err), { code: errorCode(err) });
    } finally {
      held.release();
    }
  });

  router.get("/v2/scrape/:id", async (ctx) => {
    const doc = await readScrape(store, ctx.state.teamId, jobId(ctx), deps.clock.now());
    if (doc === undefined) throw jobNotFound();
    ctx.type = "application/json";
    ctx.body = `{"success":true,"data":${doc}}`;
  });

  return router;
}
