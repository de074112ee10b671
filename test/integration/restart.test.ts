// A crawl in progress survives a graceful restart of every role: it resumes, finishes with the exact page set,
// and no page that was done before the restart is fetched again.
import { afterAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance | undefined;
  let site: FixtureSite | undefined;
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("resumes a crawl after a restart", async () => {
    site = await startFixtureSite({ delayMs: 150 });
    trawl = await startTrawl({ mode, fetchConcurrency: 2 });
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000 });
    const id = res.body.id;
    for (let i = 0; i < 200; i++) {
      const { body } = await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`);
      if (body.completed >= 10) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    trawl = await trawl.restart();
    const mid = await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`);
    expect(mid.body.status).toBe("scraping");
    expect(mid.body.completed).toBeGreaterThanOrEqual(10);
    const last = (await waitForEnd(trawl.api, id)).at(-1);
    expect(last).toMatchObject({ status: "completed", completed: expectedDocPaths().length });
    const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
    expect(docs.map((d: any) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
    const refetched = [...site.hits].filter(([p, n]) => p.startsWith("/docs/section-") && n > 1);
    // a graceful stop finishes the fetches in flight and commits them: nothing is fetched twice
    expect(refetched).toEqual([]);
  });
});
