// fastMode, as on Firecrawl (where it keeps a scrape to the engines without a browser): with RENDER=auto and a real
// Chromium, a script-built page is rendered without it and fetched statically with it, for a scrape, a crawl and a
// batch, in both modes; an option only a browser can honour is refused with it.
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptSite, type ScriptSite } from "../fixtures/script-site.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ScriptSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startScriptSite(), startTrawl({ mode, render: "auto", renderConcurrency: 1 })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("scrape: the browser without fastMode, the static page with it (SDK)", async () => {
    const fc = new Firecrawl({ apiKey: "", apiUrl: trawl.api });
    const rendered = await fc.scrape(`${site.origin}/after-load`, { formats: ["markdown"] });
    expect(rendered.metadata?.engine).toBe("chromium");
    expect(rendered.markdown).toContain("Built by script");
    const fast = await fc.scrape(`${site.origin}/after-load`, { formats: ["markdown"], fastMode: true });
    expect(fast.metadata?.engine).toBe("fetch");
    expect(fast.markdown ?? "").not.toContain("Built by script");
  });

  const docsOf = async (id: string): Promise<{ metadata: { engine: string } }[]> => (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);

  it("crawl and batch: fastMode pages are fetched statically", async () => {
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/after-load`, limit: 1, sitemap: "skip", scrapeOptions: { fastMode: true } });
    expect(crawl.status).toBe(200);
    await waitForEnd(trawl.api, crawl.body.id);
    expect((await docsOf(crawl.body.id)).map((d) => d.metadata.engine)).toEqual(["fetch"]);
    const batch = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/after-load`, `${site.origin}/app/`], fastMode: true });
    expect(batch.status).toBe(200);
    await waitForEnd(trawl.api, batch.body.id);
    expect((await docsOf(batch.body.id)).map((d) => d.metadata.engine)).toEqual(["fetch", "fetch"]);
  });

  it("refuses fastMode with an option that needs a browser, naming both", async () => {
    for (const [body, field] of [
      [{ actions: [{ type: "wait", milliseconds: 100 }] }, "actions"],
      [{ formats: ["screenshot"] }, "formats"],
      [{ waitFor: 500 }, "waitFor"],
    ] as const) {
      const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-load`, fastMode: true, ...body });
      expect(res.status, field).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST", error: expect.stringMatching(/^fastMode fetches the page without a browser/), details: [{ path: [field] }] });
    }
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/after-load`, scrapeOptions: { fastMode: true, mobile: true } });
    expect(crawl.status).toBe(400);
    expect(crawl.body.details[0].path).toEqual(["scrapeOptions", "mobile"]);
  });
});
