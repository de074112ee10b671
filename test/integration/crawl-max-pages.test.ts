// CRAWL_MAX_PAGES through the public API, in both modes: a crawl's `limit` is accepted up to it (2,000,000 with the
// default of 100,000,000, past the 1,000,000 the request schema used to cap) and the crawl runs; above it the request
// is refused with the anchor's 400 naming the maximum, and nothing is submitted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode }), startFixtureSite({})]);
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("accepts a crawl with limit 2,000,000 (CRAWL_MAX_PAGES' default is 100,000,000) and runs it to the end", async () => {
    expect(trawl.config.crawlMaxPages).toBe(100_000_000);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 2_000_000 });
    expect(res.status).toBe(200);
    const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
    expect(last.status).toBe("completed");
    expect(last.completed).toBe(expectedDocPaths().length);
    const status = await getJson(`${trawl.api}/v2/crawl/${res.body.id}`);
    expect(status.body.total).toBe(expectedDocPaths().length);
  });

  it("refuses a limit above CRAWL_MAX_PAGES with a 400 naming the maximum", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 100_000_001 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST", error: "limit 100000001 is above this server's maximum of 100000000 pages per job (CRAWL_MAX_PAGES)" });
    expect(res.body.details).toEqual([expect.objectContaining({ path: ["limit"] })]);
  });
});

describe("a server with a small CRAWL_MAX_PAGES", () => {
  let trawl: Instance;
  let site: FixtureSite;

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode: "embedded", crawlMaxPages: 5, defaultCrawlLimit: 10_000 }), startFixtureSite({})]);
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("refuses a crawl's limit above it, and a batch of more URLs, with the 400; a crawl without limit gets at most it", async () => {
    const over = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 6 });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, code: "BAD_REQUEST", error: "limit 6 is above this server's maximum of 5 pages per job (CRAWL_MAX_PAGES)" });
    const batch = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [1, 2, 3, 4, 5, 6].map((i) => `${site.origin}/docs/p${i}`) });
    expect(batch.status).toBe(400);
    expect(batch.body).toMatchObject({ success: false, code: "BAD_REQUEST", error: "a batch of 6 URLs is above this server's maximum of 5 pages per job (CRAWL_MAX_PAGES)" });
    const atMax = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 5 });
    expect(atMax.status).toBe(200);
    const noLimit = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/` });
    expect(noLimit.status).toBe(200);
    for (const id of [atMax.body.id, noLimit.body.id]) {
      const last = (await waitForEnd(trawl.api, id)).at(-1);
      expect(last.status).toBe("completed");
      expect(last.completed).toBe(5);
    }
  });
});
