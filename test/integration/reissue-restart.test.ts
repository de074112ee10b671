// No crawl stays `scraping` for ever (issue 49), in both modes: a crawl whose last result is lost (swallowed on its way to
// pages.fetched, as a dead-lettered page's failure was while the store said its database did not exist), then Trawl
// restarts: the new frontier has the crawl in no memory and no message will ever bring it back. Its reissue looks up
// the store's running crawls it does not know, restores this one and sends its outstanding work again: the crawl
// completes with every page. Before, it stayed `scraping` at one page short through any number of restarts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PageFetched } from "../../schemas/index.ts";
import type { Bus, Emission } from "../../pipeline/runtime/bus.ts";
import { reissueAfterMs } from "../../pipeline/frontier/reissue.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const LOST = "/docs/section-3/page-4.html";

/** Every pages.fetched of LOST produced through `bus` is swallowed (the frontier never hears of the page). */
function loseResults(bus: Bus): string[] {
  const lost: string[] = [];
  const produce = bus.produce.bind(bus);
  bus.produce = async (messages: Emission[]) => {
    const keep = messages.filter((m) => !(m.topic === "pages.fetched" && new URL((m.value as PageFetched).url).pathname === LOST && lost.push(LOST)));
    if (keep.length) await produce(keep);
  };
  return lost;
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  // small stage limits: the reissue bound is 2 + 2 + 5 + 5 = 14 s (reissue.ts)
  const limits = { fetchTimeoutMs: 2000, fetchRetries: 0, retryAfterMaxMs: 0, convertTimeoutMs: 5000 };

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode, ...limits }), startFixtureSite({ delayMs: 5 })]);
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("ends a crawl that a restart forgot, whose last result was lost", async () => {
    const bound = reissueAfterMs(trawl.config, { formats: ["markdown"] });
    expect(bound).toBe(14_000);
    const lost = loseResults(trawl.running.bus);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, scrapeOptions: { formats: ["markdown"] } });
    expect(res.status).toBe(200);
    const id = res.body.id;
    const expected = expectedDocPaths().sort();
    // every page but the lost one is done
    for (const until = Date.now() + 60_000; ; ) {
      const { body } = await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`);
      if (lost.length > 0 && body.completed === expected.length - 1) break;
      if (Date.now() > until) throw new Error(`the crawl did not reach ${expected.length - 1} pages: ${JSON.stringify(body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`)).body.status).toBe("scraping");

    // a restart: the new process knows nothing of the crawl, and nothing is on its way to remind it
    trawl = await trawl.restart();
    const started = Date.now();
    const last = (await waitForEnd(trawl.api, id, 6 * bound)).at(-1);
    console.log(`[reissue-restart ${mode}] ended ${((Date.now() - started) / 1000).toFixed(1)} s after the restart (bound ${bound / 1000} s)`);
    expect(last).toMatchObject({ status: "completed", completed: expected.length, total: expected.length, creditsUsed: expected.length });
    const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
    expect(docs.map((d: any) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expected);
  }, 180_000);
});
