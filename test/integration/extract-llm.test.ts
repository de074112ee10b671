// The llm provider wired end to end in both modes, against a local chat-completions server (no model runs here):
// scrape and crawl json through the model, tokens counted, the params-preview and a crawl's prompt.
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChatServer, type ChatServer } from "../fixtures/chat-server.ts";
import { startExtractSite, type ExtractSite } from "../fixtures/extract-site.ts";
import { getJson, MODES, postJson, startTrawl, type Instance } from "./harness.ts";

const schema = { type: "object", required: ["name"], properties: { name: { type: "string" }, price: { type: "number" } } };

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ExtractSite;
  let chat: ChatServer;
  let fc: Firecrawl;
  beforeAll(async () => {
    chat = await startChatServer((req) => {
      if (req.response_format?.json_schema?.name === "crawl_options") return JSON.stringify({ includePaths: ["^/shop/blog/.*"], limit: 5 });
      const system = req.messages[0]?.content ?? "";
      if (system.startsWith("Answer the user's question")) return "It is made in Portugal.";
      if (system.startsWith("Quote, word for word")) return "Made in Portugal\n\n\"A passage the page does not have\"";
      if (!req.response_format) return "A shoe shop.";
      return JSON.stringify({ data: { name: "Trail Runner 3", price: 129.9 }, evidence: { "/name": "Trail Runner 3", "/price": "costs 999" } });
    });
    [site, trawl] = await Promise.all([startExtractSite(), startTrawl({ mode, openaiBaseUrl: chat.baseUrl, openaiApiKey: "sk-local", modelName: "local-model" })]);
    fc = new Firecrawl({ apiKey: "", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await chat?.close();
  });

  it("scrape: json and summary from the model, evidence checked, tokens in metadata", async () => {
    const doc = await fc.scrape(`${site.origin}/shop/trail-runner`, { formats: [{ type: "json", schema, prompt: "the product" }, "summary"] });
    expect(doc.json).toEqual({ name: "Trail Runner 3", price: 129.9 });
    expect(doc.summary).toBe("A shoe shop.");
    const extract = (doc.metadata as Record<string, any>).extract;
    expect(extract).toMatchObject({ provider: "llm", valid: true, tokens: 200 });
    expect(extract.sources).toEqual({ "/name": { kind: "llm", text: "Trail Runner 3", foundInMarkdown: true }, "/price": { kind: "llm", text: "costs 999", foundInMarkdown: false } });
    const asked = chat.requests.find((r) => r.response_format?.json_schema?.name === "extraction");
    expect(asked?.model).toBe("local-model");
    expect(asked?.messages.at(-1)?.content).toContain("Trail Runner 3");
  });

  it("scrape: question and highlights from the model; a highlight not in the page is dropped with a warning", async () => {
    const doc = await fc.scrape(`${site.origin}/shop/trail-runner`, {
      formats: ["markdown", { type: "question", question: "Where is it made?" }, { type: "highlights", query: "origin" }],
    });
    expect(doc.answer).toBe("It is made in Portugal.");
    expect(doc.highlights).toBe("Made in Portugal");
    expect(doc.warning).toContain("1 passage(s) the model gave are not in the page and were dropped");
    expect(doc.metadata).toMatchObject({ creditsUsed: 9, extract: { provider: "llm", tokens: 200 } });
    const asked = chat.requests.find((r) => r.messages[0]?.content.startsWith("Answer the user's question"));
    expect(asked?.messages.at(-1)?.content).toContain("Question: Where is it made?");
  });

  it("counts every job's LLM tokens for the team: scrape, crawl, batch, extract and search, once each (SDK)", async () => {
    const json = { type: "json" as const, schema };
    const used = async () => (await getJson(`${trawl.api}/v2/team/token-usage`)).body.data.tokensUsed as number;
    const credits = async () => (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data.creditsUsed as number;
    const [tokens0, credits0, sdk0] = [await used(), await credits(), await fc.getTokenUsage()];
    expect(sdk0.remainingTokens).toBe(sdk0.planTokens! - tokens0);

    await fc.scrape(`${site.origin}/shop/trail-runner`, { formats: [json] }); // 1 call
    expect(await used()).toBe(tokens0 + 100);
    const crawl = await fc.crawl(`${site.origin}/shop/`, { limit: 3, sitemap: "skip", scrapeOptions: { formats: [json] }, pollInterval: 1 });
    expect(crawl.status).toBe("completed");
    expect(crawl.data).toHaveLength(3);
    for (const doc of crawl.data) expect((doc.metadata as Record<string, any>).extract.tokens).toBe(100);
    expect(await used()).toBe(tokens0 + 400);
    const batch = await fc.batchScrape([`${site.origin}/shop/events`, `${site.origin}/shop/blog/kafka`], { options: { formats: [json] }, pollInterval: 1 });
    expect(batch.status).toBe("completed");
    expect(await used()).toBe(tokens0 + 600);
    const extract = await fc.extract({ urls: [`${site.origin}/shop/trail-runner`], schema, pollInterval: 1 });
    expect(extract).toMatchObject({ status: "completed", tokensUsed: 100 });
    expect(await used()).toBe(tokens0 + 700);
    // credits: 5 a json page, the extract job's page included
    expect(await credits()).toBe(credits0 + 5 * 7);
    // a search whose results are scraped with a json format (Trawl's own index of the pages stored above)
    const search = await postJson(`${trawl.api}/v2/search`, { query: "Trail Runner", limit: 2, scrapeOptions: { formats: [json] } });
    expect(search.status).toBe(200);
    const found = search.body.data.web as { metadata: { extract: { tokens: number } } }[];
    expect(found.length).toBeGreaterThan(0);
    const searchTokens = found.reduce((n, w) => n + w.metadata.extract.tokens, 0);
    expect(searchTokens).toBe(100 * found.length);
    const total = 700 + searchTokens;
    expect(await used()).toBe(tokens0 + total);

    // reading again changes nothing (each job counted once); the SDK sees the same figure
    expect(await used()).toBe(tokens0 + total);
    expect((await fc.getTokenUsage()).remainingTokens).toBe(sdk0.remainingTokens - total);
    const history = await fc.getTokenUsageHistorical();
    expect(history.success).toBe(true);
    expect(history.periods).toHaveLength(1);
    expect(history.periods[0]).toMatchObject({ tokensUsed: tokens0 + total, startDate: expect.stringMatching(/-01T00:00:00.000Z$/) });
    const creditHistory = await fc.getCreditUsageHistorical();
    expect(creditHistory.periods.map((p) => p.creditsUsed)).toEqual([await credits()]);
  });

  it("params-preview and a crawl's prompt: the model's options, explicit options win", async () => {
    const preview = await fc.crawlParamsPreview(`${site.origin}/shop/`, "only the blog");
    expect(preview).toMatchObject({ url: `${site.origin}/shop/`, includePaths: ["^/shop/blog/.*"], limit: 5 });
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/shop/`, prompt: "only the blog", limit: 3 });
    expect(crawl.status).toBe(200);
    expect(crawl.body.promptGeneratedOptions).toEqual({ includePaths: ["^/shop/blog/.*"], limit: 5 });
    expect(crawl.body.finalCrawlerOptions).toMatchObject({ includePaths: ["^/shop/blog/.*"], limit: 3 });
  });
});
