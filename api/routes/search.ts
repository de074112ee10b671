// POST /v2/search: parse, run the search use case, shape the answer (Firecrawl's `data.web[]`).
import Router from "@koa/router";
import type { SearchRequest } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { validateBody } from "../validate.ts";
import { scrapeSettings } from "../../pipeline/usecases/request-options.ts";
import { searchWeb } from "../../pipeline/usecases/search-web.ts";
import { errorMessage, invalidField, PageError } from "../../pipeline/runtime/errors.ts";
import { billedLedger, UNLIMITED, withCreditCap } from "../../pipeline/usecases/credit-reservations.ts";

const UNSUPPORTED = ["tbs", "location", "country", "categories"] as const;

export function searchRoutes(deps: ApiDeps): Router {
  const { config } = deps;
  const router = new Router();
  const backendNote = config.searxngEndpoint
    ? `Results from the SearXNG instance at ${config.searxngEndpoint} (SEARXNG_ENDPOINT).`
    : "Results from Trawl's own index of stored documents (crawls and scrapes of the last 24 hours), ranked with BM25; set SEARXNG_ENDPOINT to search the web.";

  router.post("/v2/search", async (ctx) => {
    const body = validateBody<SearchRequest>("search-request", ctx.state.body);
    for (const field of UNSUPPORTED) {
      if (body[field] !== undefined) throw invalidField([field], `${field} is not supported by this server's search backends`);
    }
    (body.sources ?? []).forEach((source, i) => {
      const type = typeof source === "string" ? source : source.type;
      if (type !== "web") throw invalidField(["sources", i], `source "${type}" is not supported by this server; only "web" is`);
    });
    if (!body.query.trim()) throw invalidField(["query"], "query must not be blank");
    if (body.includeDomains?.length && body.excludeDomains?.length) throw invalidField(["includeDomains"], "includeDomains and excludeDomains cannot both be given");
    const teamId = String(ctx.state.teamId);
    const scrape = body.scrapeOptions ? scrapeSettings(body.scrapeOptions, ["scrapeOptions"]) : undefined;
    // 1 credit at least, held until billed; billed at most what the team has left (a PDF result parsed up to there)
    const held = (await deps.access?.reserve(teamId, 1)) ?? UNLIMITED;
    let billed: number | undefined;
    try {
      const result = await searchWeb({ ...deps, backend: deps.searchBackend, authStore: billedLedger(held, deps.authStore, (n) => (billed = n)) }, {
        query: body.query,
        limit: body.limit ?? 5,
        ...(body.includeDomains ? { includeDomains: body.includeDomains } : {}),
        ...(body.excludeDomains ? { excludeDomains: body.excludeDomains } : {}),
        timeoutMs: body.timeout ?? 60_000,
        ...(scrape ? { scrape: withCreditCap(scrape, held.credits) } : {}),
        fetchTimeoutMs: config.fetchTimeoutMs,
        teamId,
      });
      ctx.body = { success: true, data: { web: result.web }, warning: backendNote, id: result.id, creditsUsed: billed ?? result.creditsUsed };
    } catch (err) {
      if (!(err instanceof PageError)) throw err;
      if (err.code === "SEARCH_TIMEOUT") throw apiError(408, errorMessage(err), { code: "SEARCH_TIMEOUT" });
      if (err.code === "SEARCH_BACKEND_ERROR") throw apiError(502, errorMessage(err), { code: "SEARCH_BACKEND_ERROR" });
      throw err;
    } finally {
      held.release();
    }
  });

  return router;
}
