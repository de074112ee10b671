// Lost work is sent again (pipeline/frontier/reissue.ts), in both modes: one fetch result is dropped on its way to
// pages.fetched, and another is held back until the frontier has sent its URL again, then delivered late. The crawl
// still completes with exactly the site's pages, no document stored twice, credits exact. Without the reissue the
// dropped page's URL stays queued and the crawl `scraping` for ever.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchTask, PageFetched } from "../../schemas/index.ts";
import type { Bus, Emission } from "../../pipeline/runtime/bus.ts";
import { reissueAfterMs } from "../../pipeline/frontier/reissue.ts";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const DROPPED = "/docs/section-2/page-3.html";
const LATE = "/docs/section-4/page-5.html";

/**
 * A fault on the bus every stage produces through: the first pages.fetched of DROPPED is swallowed; the first of LATE
 * is held until a second fetch task for LATE (the reissue) was produced, then produced as well.
 */
function injectFaults(bus: Bus): { dropped: string[]; late: string[]; reissued: string[] } {
  const seen = { dropped: [] as string[], late: [] as string[], reissued: [] as string[] };
  const produce = bus.produce.bind(bus);
  const tasks = new Map<string, number>();
  let held: Emission | undefined;
  let heldDone = false;
  bus.produce = async (messages: Emission[]) => {
    const keep: Emission[] = [];
    for (const m of messages) {
      const path = m.topic === "pages.fetched" || m.topic === "fetch.tasks" ? new URL((m.value as PageFetched | FetchTask).url).pathname : "";
      if (m.topic === "fetch.tasks" && (m.value as FetchTask).kind === "page") {
        tasks.set(path, (tasks.get(path) ?? 0) + 1);
        if (tasks.get(path) === 2) seen.reissued.push(path);
      }
      if (m.topic === "pages.fetched" && path === DROPPED && seen.dropped.length === 0) {
        seen.dropped.push(path);
        continue;
      }
      if (m.topic === "pages.fetched" && path === LATE && !held && !heldDone) {
        held = m;
        seen.late.push(path);
        continue;
      }
      keep.push(m);
    }
    if (keep.length) await produce(keep);
    if (held && !heldDone && (tasks.get(LATE) ?? 0) >= 2) {
      heldDone = true;
      await produce([held]);
    }
  };
  return seen;
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  // small stage limits: a stalled crawl is reissued after 2 + 2 + 5 + 5 = 14 s (reissue.ts); a conversion keeps 5 s on
  // a busy machine
  const limits = { fetchTimeoutMs: 2000, fetchRetries: 0, retryAfterMaxMs: 0, convertTimeoutMs: 5000 };

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode, ...limits }), startFixtureSite({ delayMs: 5 })]);
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("completes with every page once after a fetch result was lost and another came back late", async () => {
    const bound = reissueAfterMs(trawl.config, { formats: ["markdown"] });
    expect(bound).toBe(14_000);
    const faults = injectFaults(trawl.running.bus);
    const started = Date.now();
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, scrapeOptions: { formats: ["markdown"] } });
    expect(res.status).toBe(200);
    const id = res.body.id;
    const last = (await waitForEnd(trawl.api, id, 8 * bound)).at(-1);
    console.log(`[reissue ${mode}] completed in ${((Date.now() - started) / 1000).toFixed(1)} s (bound ${bound / 1000} s)`);
    expect(faults.dropped).toEqual([DROPPED]);
    expect(faults.late).toEqual([LATE]);
    expect(faults.reissued).toEqual(expect.arrayContaining([DROPPED, LATE]));

    const expected = expectedDocPaths().sort();
    expect(last.status).toBe("completed");
    expect(last.completed).toBe(expected.length);
    expect(last.total).toBe(expected.length);
    expect(last.creditsUsed).toBe(expected.length);
    const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
    expect(docs.map((d: any) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expected);
    // stored once each (the API's read would hide a second row of a URL key; the store's rows do not)
    const { keys } = await trawl.running.store.documentKeys(id);
    expect(keys.length).toBe(expected.length);
    expect(new Set(keys).size).toBe(expected.length);
    // the late original and the reissue were both fetched and converted; one document (a busy machine may stall the
    // crawl once more and fetch it a third time)
    expect(site.hits.get(LATE)).toBeGreaterThanOrEqual(2);
  });
});
