// POST /v2/search in both modes through the official JS SDK: Trawl's own index of stored documents (BM25) and a
// SearXNG backend (a local server speaking its JSON API); team and service endpoints counted from real jobs.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startFakeSearxng, type FakeSearxng } from "../fixtures/searxng.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let withSearx: Instance;
  let site: FixtureSite;
  let searx: FakeSearxng;
  let firecrawl: Firecrawl;
  beforeAll(async () => {
    site = await startFixtureSite();
    searx = await startFakeSearxng((q, i) => (i === 0 ? `${site.origin}/docs/about` : `https://results.example.com/${encodeURIComponent(q)}/${i}`));
    [trawl, withSearx] = await Promise.all([startTrawl({ mode }), startTrawl({ mode, searxngEndpoint: searx.endpoint })]);
    firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await withSearx?.stop();
    await site?.close();
    await searx?.close();
  });

  it("own index: finds crawled and scraped pages, best BM25 first, and says which backend answered", async () => {
    const before = await firecrawl.search("anything", { limit: 3 });
    expect(before.web ?? []).toEqual([]);
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 20 });
    await waitForEnd(trawl.api, crawl.body.id);
    await firecrawl.scrape(`${site.origin}/other/outside.html`, { formats: ["markdown"] });

    const res = await postJson(`${trawl.api}/v2/search`, { query: "section 3 overview", limit: 5 });
    expect(res.status).toBe(200);
    expect(res.body.warning).toMatch(/own index/);
    expect(res.body.data.web[0]).toMatchObject({ url: `${site.origin}/docs/section-3/`, title: "Section 3" });
    expect(res.body.data.web.length).toBeLessThanOrEqual(5);

    const outside = await firecrawl.search("outside the start path", { limit: 2 });
    expect(outside.web?.[0]).toMatchObject({ url: `${site.origin}/other/outside.html`, title: "Outside" });
    expect(outside.warning).toMatch(/own index/);

    const scraped = await firecrawl.search("redirected", { limit: 1, scrapeOptions: { formats: ["markdown"] } });
    const first = scraped.web?.[0] as any;
    expect(first.url).toBe(`${site.origin}/docs/target.html`);
    expect(first.markdown).toContain("You were redirected.");
    expect(first.metadata.statusCode).toBe(200);
    expect((await firecrawl.search("zzzunknownword")).web ?? []).toEqual([]);
  });

  it("SearXNG: its JSON API, paged up to limit, domain filters, scraped results", async () => {
    const sdk = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: withSearx.api });
    const res = await sdk.search("kafka streams", { limit: 15 });
    expect(res.warning).toMatch(/SearXNG/);
    expect(res.web?.length).toBe(15);
    expect(res.web?.[1]).toMatchObject({ url: "https://results.example.com/kafka%20streams/1", title: "Result 2 for kafka streams", description: "Snippet 2 about kafka streams" });
    const asked = searx.requests.filter((p) => p.get("q") === "kafka streams");
    expect(asked.map((p) => p.get("pageno"))).toEqual(["1", "2"]);
    expect(asked.every((p) => p.get("format") === "json")).toBe(true);

    const only = await postJson(`${withSearx.api}/v2/search`, { query: "local", limit: 5, includeDomains: ["127.0.0.1"], scrapeOptions: { formats: ["markdown"] } });
    expect(only.status).toBe(200);
    expect(only.body.data.web).toHaveLength(1);
    expect(only.body.data.web[0]).toMatchObject({ url: `${site.origin}/docs/about`, title: "Result 1 for local" });
    expect(only.body.data.web[0].markdown).toContain("About these docs.");
    const excluded = await postJson(`${withSearx.api}/v2/search`, { query: "x", limit: 30, excludeDomains: ["results.example.com"] });
    expect(excluded.body.data.web.map((w: any) => w.url)).toEqual([`${site.origin}/docs/about`]);
  });

  it("400 for bad values of every field", async () => {
    const bad: Record<string, unknown>[] = [
      {}, { query: "" }, { query: "   " }, { query: 5 }, { query: "q", limit: 0 }, { query: "q", limit: 101 }, { query: "q", sources: ["news"] },
      { query: "q", sources: [{ type: "images" }] }, { query: "q", sources: ["podcasts"] }, { query: "q", tbs: "qdr:d" }, { query: "q", location: "Germany" },
      { query: "q", country: "de" }, { query: "q", categories: ["github"] }, { query: "q", timeout: 5 }, { query: "q", includeDomains: "a.com" },
      { query: "q", includeDomains: ["a.com"], excludeDomains: ["b.com"] }, { query: "q", scrapeOptions: { waitFor: 8000, timeout: 15000 } },
      { query: "q", scrapeOptions: { formats: ["nope"] } }, { query: "q", unknownKey: 1 },
    ];
    for (const body of bad) {
      const res = await postJson(`${trawl.api}/v2/search`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ success: false, code: "BAD_REQUEST" });
    }
    const ok = await postJson(`${trawl.api}/v2/search`, { query: "q", sources: ["web", { type: "web" }], limit: 100, timeout: 30000, ignoreInvalidURLs: true, origin: "t", integration: "t" });
    expect(ok.status).toBe(200);
  });

  it("team and service endpoints: credits from real jobs, tokens, queue status, concurrency", async () => {
    const usage = await firecrawl.getCreditUsage();
    expect(usage.planCredits).toBeGreaterThan(0);
    expect(usage.remainingCredits).toBeLessThan(usage.planCredits as number);
    // authentication off: no plan, no billing period; credits used count every recorded job
    expect(usage).toMatchObject({ billingPeriodStart: null, billingPeriodEnd: null });
    const raw1 = (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data;
    expect(raw1.remainingCredits + raw1.creditsUsed).toBe(raw1.planCredits);
    // one map = 1 credit, one scrape of an HTML page = 1 credit
    await firecrawl.map(`${site.origin}/docs/`, { sitemap: "skip" });
    await firecrawl.scrape(`${site.origin}/docs/about`);
    const raw2 = (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data;
    expect(raw2.creditsUsed - raw1.creditsUsed).toBe(2);

    const tokens = await firecrawl.getTokenUsage();
    expect(tokens).toMatchObject({ remainingTokens: tokens.planTokens });
    const conc = await firecrawl.getConcurrency();
    expect(conc.maxConcurrency).toBe(trawl.config.fetchConcurrency);
    expect(conc.concurrency).toBeGreaterThanOrEqual(0);
    const queue = await firecrawl.getQueueStatus();
    expect(queue).toMatchObject({ success: true, waitingJobsInQueue: 0, activeJobsInQueue: 0, jobsInQueue: 0, maxConcurrency: trawl.config.fetchConcurrency });
    expect(Date.now() - Date.parse(queue.mostRecentSuccess as string)).toBeLessThan(60_000);
  });
});
