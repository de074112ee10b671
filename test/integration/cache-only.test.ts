// minAge and lockdown (cache-only scrapes) in both modes, through the official JS SDK and raw HTTP: a hit is served
// from the page cache without a request to the site; a miss is 404 with Firecrawl's code; lockdown costs 5 credits
// on a hit and 1 on a miss and keeps no result; options a cached response cannot honour are refused with 400.
import Firecrawl from "@mendable/firecrawl-js";
import { startCountingSite } from "../fixtures/counting-site.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** /v/<name> answers "version N", N its request count; every request is counted. */
const countingSite = () => startCountingSite((_path, n) => `<html><head><title>v</title></head><body><p>version ${n}</p></body></html>`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const creditsUsed = async (api: string): Promise<number> => (await getJson(`${api}/v2/team/credit-usage`)).body.data.creditsUsed;

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: Awaited<ReturnType<typeof countingSite>>;
  let fc: Firecrawl;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([countingSite(), startTrawl({ mode })]);
    fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("minAge: the newest cached response when it is old enough, else 404 SCRAPE_NO_CACHED_DATA; never a fetch", async () => {
    const url = `${site.origin}/v/min`;
    expect((await fc.scrape(url)).markdown).toBe("version 1"); // fetched and cached
    const young = await postJson(`${trawl.api}/v2/scrape`, { url, minAge: 60_000 });
    expect(young.status).toBe(404);
    expect(young.body).toMatchObject({ success: false, code: "SCRAPE_NO_CACHED_DATA" });
    await sleep(1_200);
    const old = await fc.scrape(url, { minAge: 1_000 });
    expect(old.markdown).toBe("version 1");
    expect(old.metadata).toMatchObject({ cacheState: "hit", statusCode: 200 });
    // minAge 1: any cached age; an unknown page: 404 through the SDK as well
    expect((await fc.scrape(url, { minAge: 1 })).markdown).toBe("version 1");
    await expect(fc.scrape(`${site.origin}/v/never-min`, { minAge: 1 })).rejects.toMatchObject({ status: 404, code: "SCRAPE_NO_CACHED_DATA" });
    expect(site.hits.get("/v/min")).toBe(1);
    expect(site.hits.get("/v/never-min")).toBeUndefined();
  });

  it("lockdown: a hit costs 5 credits and is not kept; a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS for 1 credit, with no request", async () => {
    const url = `${site.origin}/v/lock`;
    await fc.scrape(url);
    const before = await creditsUsed(trawl.api);
    const hit = await fc.scrape(url, { lockdown: true });
    expect(hit.markdown).toBe("version 1");
    expect(hit.metadata).toMatchObject({ cacheState: "hit", creditsUsed: 5 });
    expect((await getJson(`${trawl.api}/v2/scrape/${hit.metadata?.scrapeId}`)).status).toBe(404); // zero data retention
    expect(await creditsUsed(trawl.api)).toBe(before + 5);
    const miss = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/v/never-lock`, lockdown: true });
    expect(miss.status).toBe(404);
    expect(miss.body).toMatchObject({ success: false, code: "SCRAPE_LOCKDOWN_CACHE_MISS" });
    expect(miss.body.error).not.toContain("never-lock");
    expect(await creditsUsed(trawl.api)).toBe(before + 6);
    // maxAge bounds a lockdown lookup: nothing cached in the last millisecond
    await sleep(20);
    expect((await postJson(`${trawl.api}/v2/scrape`, { url, lockdown: true, maxAge: 1 })).body.code).toBe("SCRAPE_LOCKDOWN_CACHE_MISS");
    expect(site.hits.get("/v/lock")).toBe(1);
    expect(site.hits.get("/v/never-lock")).toBeUndefined();
  });

  it("a batch scrape with lockdown: cached pages are documents, the others fail with the miss code, nothing is fetched", async () => {
    const cached = `${site.origin}/v/batch-cached`;
    await fc.scrape(cached);
    const urls = [cached, `${site.origin}/v/batch-never`];
    const started = await postJson(`${trawl.api}/v2/batch/scrape`, { urls, lockdown: true });
    expect(started.status).toBe(200);
    await waitForEnd(trawl.api, started.body.id, 60_000, "batch/scrape");
    const docs = (await allChunks(trawl.api, started.body.id, "", "batch/scrape")).flatMap((c) => c.body.data);
    expect(docs.map((d: { metadata: { sourceURL: string; creditsUsed: number } }) => [d.metadata.sourceURL, d.metadata.creditsUsed])).toEqual([[cached, 5]]);
    const errors = (await getJson(`${trawl.api}/v2/batch/scrape/${started.body.id}/errors`)).body;
    expect(errors.errors.map((e: { url: string; code: string }) => [e.url, e.code])).toEqual([[`${site.origin}/v/batch-never`, "SCRAPE_LOCKDOWN_CACHE_MISS"]]);
    expect(site.hits.get("/v/batch-cached")).toBe(1);
    expect(site.hits.get("/v/batch-never")).toBeUndefined();
  });

  it("refusals: what a cached response cannot honour, lockdown with maxAge 0, and cache-only crawls are 400", async () => {
    const url = `${site.origin}/v/refused`;
    const cases: [unknown, string][] = [
      [{ url, lockdown: true, formats: ["screenshot"] }, "formats"],
      [{ url, minAge: 1, actions: [{ type: "wait", milliseconds: 10 }] }, "actions"],
      [{ url, lockdown: true, maxAge: 0 }, "maxAge"],
    ];
    for (const [body, field] of cases) {
      const res = await postJson(`${trawl.api}/v2/scrape`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details[0].path).toEqual([field]);
    }
    for (const scrapeOptions of [{ lockdown: true }, { minAge: 1 }]) {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url, scrapeOptions });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toEqual(["scrapeOptions", Object.keys(scrapeOptions)[0]]);
    }
    expect((await postJson(`${trawl.api}/v2/crawl`, { url, limit: 1, scrapeOptions: { lockdown: false } })).status).toBe(200);
    expect(site.hits.get("/v/refused") ?? 0).toBeLessThanOrEqual(1); // only the plain crawl's fetch
  });
});
