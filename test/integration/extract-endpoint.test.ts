// POST /v2/extract and GET /v2/extract/:id in both modes, through the official JS SDK: pages, a `/*` path crawl,
// sources, clear 400s, and extraction again from a finished crawl's stored pages without any fetch.
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtractSite, type ExtractSite } from "../fixtures/extract-site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const offerSchema = { type: "object", properties: { price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" }, wordCount: { type: "integer" } } };

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ExtractSite;
  let fc: Firecrawl;
  let finished = "";
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startExtractSite(), startTrawl({ mode })]);
    fc = new Firecrawl({ apiKey: "", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  const creditsUsed = async (): Promise<number> => (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data.creditsUsed;

  it("SDK extract() over two pages: one merged answer, sources per field, tokens 0 without a model", async () => {
    const before = await creditsUsed();
    const res = await fc.extract({ urls: [`${site.origin}/shop/trail-runner`, `${site.origin}/shop/blog/kafka`], schema: offerSchema, showSources: true, pollInterval: 1 });
    expect(res.status).toBe("completed");
    // charged with authentication off too (the team "bypass"): 5 credits a page extracted
    expect(await creditsUsed()).toBe(before + 10);
    expect(res.data).toEqual({ price: 129.9, currency: "EUR", sku: "TR3-42", wordCount: 1830 });
    expect((res as unknown as { tokensUsed: number }).tokensUsed).toBe(0);
    expect(typeof res.expiresAt).toBe("string");
    const sources = (res as unknown as { sources: Record<string, { url: string; source: { kind: string; path: string } }[]> }).sources;
    expect(sources["/price"]).toEqual([{ url: `${site.origin}/shop/trail-runner`, source: expect.objectContaining({ kind: "json-ld", path: "jsonld[0].offers.price" }) }]);
    expect(sources["/wordCount"]?.[0]?.url).toBe(`${site.origin}/shop/blog/kafka`);
    finished = res.id as string;
  });

  it("a URL ending in /* crawls that path; without showSources no sources", async () => {
    const before = await creditsUsed();
    const res = await fc.extract({ urls: [`${site.origin}/shop/*`], schema: { type: "object", properties: { price: { type: "number" }, sku: { type: "string" } } }, pollInterval: 1 });
    expect(res.status).toBe("completed");
    // the wildcard is a crawl with a json format, billed as a crawl (5 a page), not a second time by the job
    const crawls = (await getJson(`${trawl.api}/v2/crawl/active`)).body.crawls.length;
    expect(crawls).toBe(0);
    // the four pages under /shop/ (the shop, the product, the article, the events)
    expect((await creditsUsed()) - before).toBe(5 * 4);
    expect(res.data).toEqual({ price: 129.9, sku: "TR3-42" });
    expect((res as unknown as { sources?: unknown }).sources).toBeUndefined();
  });

  it("clear 400s: web search, systemPrompt, no schema nor prompt, an invalid schema, a bad URL; 404 for an unknown job", async () => {
    const cases: [unknown, RegExp][] = [
      [{ urls: [`${site.origin}/shop/`], prompt: "x", enableWebSearch: true }, /enableWebSearch is not available/],
      [{ urls: [`${site.origin}/shop/`] }, /Either prompt or schema is required/],
      [{ urls: [`${site.origin}/shop/`], prompt: "x", systemPrompt: "be brief" }, /systemPrompt is not supported/],
      [{ urls: [`${site.origin}/shop/`], schema: { type: "nope" } }, /invalid JSON Schema/],
      [{ urls: ["ftp://x.test/"], schema: offerSchema }, /unsupported protocol/],
    ];
    for (const [body, message] of cases) {
      const r = await postJson(`${trawl.api}/v2/extract`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatch(message);
    }
    expect((await getJson(`${trawl.api}/v2/extract/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it("without an LLM: params-preview is a clear 400, a crawl's prompt is reported as not applied", async () => {
    const preview = await postJson(`${trawl.api}/v2/crawl/params-preview`, { url: `${site.origin}/shop/`, prompt: "only the blog" });
    expect(preview.status).toBe(400);
    expect(preview.body.error).toMatch(/Failed to process natural language prompt.*no LLM is configured/);
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/shop/`, prompt: "only the blog", limit: 2 });
    expect(crawl.status).toBe(200);
    expect(crawl.body.promptGeneratedOptions).toBeUndefined();
    const seen = await waitForEnd(trawl.api, crawl.body.id);
    expect(seen.at(-1).warning).toMatch(/^The prompt was not applied: no LLM is configured/);
  });

  it("a finished extract job is still served after a restart", async () => {
    trawl = await trawl.restart();
    const again = await getJson(`${trawl.api}/v2/extract/${finished}`);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, status: "completed", data: { price: 129.9, sku: "TR3-42" } });
    fc = new Firecrawl({ apiKey: "", apiUrl: trawl.api });
  });

  it("extracts again from a finished crawl's stored pages with a new schema, with the site gone (no fetch)", async () => {
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/datatype-numeric.html`, limit: 1, scrapeOptions: { formats: ["markdown", "html"] } });
    await waitForEnd(trawl.api, crawl.body.id);
    await site.close();
    const before = await creditsUsed();
    const res = await fc.extract({ urls: [`crawl:${crawl.body.id}`], schema: { type: "object", properties: { types: { type: "array", items: { type: "object", properties: { name: { type: "string" }, storage_size: { type: "string" } } } } } }, pollInterval: 1 });
    expect(res.status).toBe("completed");
    const types = (res.data as { types: { name: string; storage_size: string }[] }).types;
    expect(types).toHaveLength(10);
    expect(types[9]).toEqual({ name: "bigserial", storage_size: "8 bytes" });
    expect(await creditsUsed()).toBe(before + 5); // one stored page extracted again
    const running = await postJson(`${trawl.api}/v2/extract`, { crawlId: "00000000-0000-4000-8000-000000000000", schema: offerSchema });
    expect(running.status).toBe(400);
  });
});
