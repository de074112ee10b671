// Batch scrape (/v2/batch/scrape) in both modes: the given URLs through the same stages as a crawl, no link
// following; status and paging like a crawl; cancel; errors; webhooks named batch_scrape.*; the official JS SDK;
// 5,000 URLs accepted at once (validated, stored, queued: no fetch on the request path).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { getJson, MODES, postJson, startTrawl, type Instance } from "./harness.ts";

async function waitBatch(api: string, id: string, timeoutMs = 90_000): Promise<any> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await getJson(`${api}/v2/batch/scrape/${id}?limit=1`);
    if (body.status !== "scraping") return body;
    if (Date.now() > end) throw new Error(`batch still scraping: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(MODES)("batch scrape (%s mode)", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;

  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver("s")]);
    trawl = await startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: "s", statusChunkMaxBytes: 4096 });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("scrapes exactly the given URLs, follows no link, pages like a crawl, and names its webhooks batch_scrape.*", async () => {
    const urls = ["/docs/", "/docs/about", "/docs/section-2/page-3.html", "/docs/missing"].map((p) => `${site.origin}${p}`);
    const res = await postJson(`${trawl.api}/v2/batch/scrape`, { urls, formats: ["markdown", "html"], webhook: { url: receiver.url, events: ["started", "page", "completed"] } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, id: expect.any(String), url: `${trawl.api}/v2/batch/scrape/${res.body.id}` });
    const done = await waitBatch(trawl.api, res.body.id);
    // a page that failed does not fail the batch: it is listed by /errors
    expect(done).toMatchObject({ success: true, status: "completed", completed: 4, total: 4, creditsUsed: 4 });
    const chunks: any[] = [];
    for (let url: string | undefined = `${trawl.api}/v2/batch/scrape/${res.body.id}`; url; url = chunks.at(-1).body.next) chunks.push(await getJson(url));
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.slice(0, -1).every((c) => c.body.next.startsWith(`${trawl.api}/v2/batch/scrape/${res.body.id}?skip=`))).toBe(true);
    const docs = chunks.flatMap((c) => c.body.data);
    expect(docs.map((d: any) => d.metadata.sourceURL).sort()).toEqual([...urls].sort());
    expect(docs.find((d: any) => d.metadata.sourceURL.endsWith("/missing")).metadata.statusCode).toBe(404);
    expect(docs.every((d: any) => typeof d.html === "string")).toBe(true);
    // no link followed: nothing but the four URLs was fetched
    expect([...site.hits.keys()].filter((p) => p.startsWith("/docs/section-1"))).toEqual([]);
    for (let i = 0; i < 100 && !receiver.received.some((r) => r.id === res.body.id && r.type === "batch_scrape.completed"); i++) await new Promise((r) => setTimeout(r, 100));
    const types = receiver.received.filter((r) => r.id === res.body.id).map((r) => r.type);
    expect(types[0]).toBe("batch_scrape.started");
    expect(types.filter((t) => t === "batch_scrape.page")).toHaveLength(4);
    expect(types.at(-1)).toBe("batch_scrape.completed");
  });

  it("refuses bad input with 400, or lists invalid URLs when asked to ignore them", async () => {
    for (const body of [{ urls: [] }, { urls: "x" }, { urls: ["ftp://x.test/a"] }, { urls: [`${site.origin}/docs/`], appendToId: "11111111-1111-4111-8111-111111111111" }, { urls: [`${site.origin}/docs/`], zeroDataRetention: true }, { urls: [`${site.origin}/docs/`], nope: 1 }]) {
      const res = await postJson(`${trawl.api}/v2/batch/scrape`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.success).toBe(false);
    }
    const res = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/docs/about`, "not a url at all", "ftp://x.test/a"], ignoreInvalidURLs: true });
    expect(res.body.invalidURLs).toEqual(["not a url at all", "ftp://x.test/a"]);
    expect(await waitBatch(trawl.api, res.body.id)).toMatchObject({ status: "completed", completed: 1 });
  });

  it("works through the official JS SDK: batchScrape, start + status, errors, cancel", async () => {
    const firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
    const job = await firecrawl.batchScrape([`${site.origin}/docs/about`, `${site.origin}/docs/section-1/`], { options: { formats: ["markdown"] }, pollInterval: 1 });
    expect(job.status).toBe("completed");
    expect(job.data.map((d) => d.metadata?.sourceURL).sort()).toEqual([`${site.origin}/docs/about`, `${site.origin}/docs/section-1/`]);
    const started = await firecrawl.startBatchScrape([`${site.origin}/docs/missing`]);
    expect((await firecrawl.getBatchScrapeStatus(started.id)).id).toBe(started.id);
    expect(await firecrawl.getBatchScrapeErrors(started.id)).toMatchObject({ errors: expect.any(Array) });
    expect(typeof (await firecrawl.cancelBatchScrape(started.id))).toBe("boolean");
  });

  it("accepts 5,000 URLs at once without fetching on the request path", async () => {
    const urls = Array.from({ length: 5000 }, (_, i) => `${site.origin}/docs/section-${(i % 6) + 1}/page-${i}.html?n=${i}`);
    const hits = [...site.hits.values()].reduce((a, b) => a + b, 0);
    const res = await postJson(`${trawl.api}/v2/batch/scrape`, { urls, formats: ["links"] });
    expect(res.status).toBe(200);
    // answered before any of them was fetched, and stored: the status counts all of them as soon as the frontier ran
    expect([...site.hits.values()].reduce((a, b) => a + b, 0)).toBe(hits);
    let status: any;
    for (let i = 0; i < 300; i++) {
      status = (await getJson(`${trawl.api}/v2/batch/scrape/${res.body.id}?limit=1`)).body;
      if (status.total === 5000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toMatchObject({ success: true, total: 5000 });
    expect((await fetch(`${trawl.api}/v2/batch/scrape/${res.body.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await getJson(`${trawl.api}/v2/batch/scrape/${res.body.id}?limit=1`)).body.status).toBe("cancelled");
  });
});
