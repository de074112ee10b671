// maxAge / storeInCache in both modes: POST /v2/scrape and crawls read fetched responses from the page cache
// instead of fetching, the document says so (cacheState, cachedAt), and links of a cached page are still followed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCountingSite } from "../fixtures/counting-site.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** A page whose content changes on every request: /v/<name> answers "version N" with N its request count. */
const changingSite = () => startCountingSite((_path, n) => `<html><head><title>v</title></head><body><p>version ${n}</p></body></html>`);

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: Awaited<ReturnType<typeof changingSite>>;
  let docs: FixtureSite;
  beforeAll(async () => {
    [site, docs, trawl] = await Promise.all([changingSite(), startFixtureSite(), startTrawl({ mode })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await docs?.close();
  });

  it("POST /v2/scrape: maxAge reads the cache (hit with cachedAt), 0 always fetches, storeInCache:false stores nothing", async () => {
    const url = `${site.origin}/v/a`;
    const first = await postJson(`${trawl.api}/v2/scrape`, { url, maxAge: 60_000 });
    expect(first.body.data.markdown).toBe("version 1");
    expect(first.body.data.metadata.cacheState).toBe("miss");
    const second = await postJson(`${trawl.api}/v2/scrape`, { url, maxAge: 60_000 });
    expect(second.body.data.markdown).toBe("version 1");
    expect(second.body.data.metadata).toMatchObject({ cacheState: "hit", statusCode: 200, sourceURL: url });
    expect(Date.parse(second.body.data.metadata.cachedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(site.hits.get("/v/a")).toBe(1);
    // no maxAge: a fresh fetch (and no cacheState), which also refreshes the cache
    const fresh = await postJson(`${trawl.api}/v2/scrape`, { url });
    expect(fresh.body.data.markdown).toBe("version 2");
    expect(fresh.body.data.metadata.cacheState).toBeUndefined();
    expect((await postJson(`${trawl.api}/v2/scrape`, { url, maxAge: 60_000 })).body.data.markdown).toBe("version 2");
    // other request headers: another cache entry
    expect((await postJson(`${trawl.api}/v2/scrape`, { url, maxAge: 60_000, headers: { "accept-language": "fr" } })).body.data.metadata.cacheState).toBe("miss");

    const other = `${site.origin}/v/b`;
    await postJson(`${trawl.api}/v2/scrape`, { url: other, storeInCache: false });
    const after = await postJson(`${trawl.api}/v2/scrape`, { url: other, maxAge: 60_000 });
    expect(after.body.data.metadata.cacheState).toBe("miss");
    expect(after.body.data.markdown).toBe("version 2");
  });

  it("a crawl with scrapeOptions.maxAge takes every page from the cache and still follows their links", async () => {
    const first = await postJson(`${trawl.api}/v2/crawl`, { url: `${docs.origin}/docs/`, limit: 1000 });
    await waitForEnd(trawl.api, first.body.id);
    const fetchedOnce = new Map(docs.hits);
    const second = await postJson(`${trawl.api}/v2/crawl`, { url: `${docs.origin}/docs/`, limit: 1000, scrapeOptions: { maxAge: 3_600_000 } });
    await waitForEnd(trawl.api, second.body.id);
    const pages = (await allChunks(trawl.api, second.body.id)).flatMap((c) => c.body.data);
    expect(pages.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
    // the redirect's target was cached under the URL that was asked for: every document is a hit
    expect(pages.every((d: { metadata: { cacheState: string } }) => d.metadata.cacheState === "hit")).toBe(true);
    for (const path of expectedDocPaths()) expect(docs.hits.get(path), path).toBe(fetchedOnce.get(path));
  });

  it("proxy \"stealth\" is refused with 400 (no such proxy network here)", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/v/c`, proxy: "stealth" });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("stealth");
  });
});
