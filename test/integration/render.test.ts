// Rendering through the service in both modes: POST /v2/scrape (also through the official JS SDK) with actions and a
// screenshot, RENDER=auto on a script-built and a static page, a crawl whose pages and links exist only after their
// scripts ran, and a server without a browser; screenshots as data URLs (SCREENSHOTS=data-url; stored ones: screenshots.test.ts).
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptSite, type ScriptSite } from "../fixtures/script-site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const documentsOf = async (api: string, id: string) => (await allChunks(api, id)).flatMap((c) => c.body.data as any[]);

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ScriptSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startScriptSite(), startTrawl({ mode, render: "auto", renderConcurrency: 2, screenshots: "data-url" })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("the official SDK scrapes with actions and a screenshot", async () => {
    const firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
    const doc = await firecrawl.scrape(`${site.origin}/after-click`, {
      formats: ["markdown", { type: "screenshot", fullPage: true }],
      actions: [{ type: "click", selector: "#more" }, { type: "wait", milliseconds: 200 }, { type: "scrape" }, { type: "executeJavascript", script: "return document.querySelector('#out').textContent" }, { type: "screenshot" }],
      timeout: 30_000,
    });
    expect(doc.markdown).toContain("CLICKED CONTENT");
    expect(doc.screenshot).toMatch(/^data:image\/png;base64,/);
    const actions = doc.actions as { screenshots: string[]; scrapes: { html: string }[]; javascriptReturns: unknown[] };
    expect(actions.screenshots[0]).toMatch(/^data:image\/png;base64,/);
    expect(actions.scrapes[0]?.html).toContain("CLICKED CONTENT");
    expect(actions.javascriptReturns).toEqual([{ type: "string", value: "CLICKED CONTENT" }]);
    expect(doc.metadata?.engine).toBe("chromium");
  });

  it("RENDER=auto renders the script-built page and keeps the static one static; waitFor waits", async () => {
    const built = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-load` });
    expect(built.status).toBe(200);
    expect(built.body.data.markdown).toContain("Built by script");
    expect(built.body.data.metadata.engine).toBe("chromium");
    const plain = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/static` });
    expect(plain.body.data.markdown).toContain("Static page");
    expect(plain.body.data.metadata.engine).toBe("fetch");
    const delayed = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-delay`, waitFor: 1500, formats: ["screenshot@fullPage", "markdown"] });
    expect(delayed.body.data.markdown).toContain("DELAYED CONTENT");
    expect(delayed.body.data.screenshot).toMatch(/^data:image\/png;base64,/);
    const ready = await getJson(`${trawl.api}/ready`);
    expect(ready.body.renderer).toEqual({ mode: "auto", available: true });
  });

  it("refuses bad actions with a 400", async () => {
    for (const actions of [[{ type: "wait", milliseconds: 100, selector: "#x" }], [{ type: "click" }], [{ type: "write", text: "a", key: "b" }], [{ type: "wait", milliseconds: 61_000 }], [{ type: "teleport" }]]) {
      const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-load`, actions });
      expect(res.status, JSON.stringify(actions)).toBe(400);
      expect(res.body.success).toBe(false);
    }
  });

  it("crawls a site whose pages and links are built by scripts", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/app/`, limit: 10 });
    expect(res.status).toBe(200);
    const seen = await waitForEnd(trawl.api, res.body.id, 90_000);
    expect(seen.at(-1).status).toBe("completed");
    const docs = await documentsOf(trawl.api, res.body.id);
    const byPath = new Map(docs.map((d) => [new URL(d.metadata.sourceURL).pathname, d]));
    expect([...byPath.keys()].sort()).toEqual(["/app/", "/app/page-1", "/app/page-2", "/app/page-3"]);
    expect(byPath.get("/app/page-2").markdown).toContain("APP PAGE TWO");
    for (const d of docs) expect(d.metadata.engine).toBe("chromium");
  });
});

describe("without a browser", () => {
  let trawl: Instance;
  let site: ScriptSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startScriptSite(), startTrawl({ mode: "embedded", render: "auto", chromiumPath: "/nonexistent/chromium" })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("says so in /ready, refuses what needs a browser, and keeps the static HTML of script-built pages with a warning", async () => {
    const ready = await getJson(`${trawl.api}/ready`);
    expect(ready.body.renderer).toMatchObject({ mode: "auto", available: false, reason: expect.stringContaining("/nonexistent/chromium") });
    const refused = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-load`, waitFor: 500 });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain("needs a browser");
    const fallback = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/after-load` });
    expect(fallback.status).toBe(200);
    expect(fallback.body.data.metadata.engine).toBe("fetch");
    expect(fallback.body.data.warning).toContain("no browser is available");
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/after-load`, limit: 1 });
    await waitForEnd(trawl.api, crawl.body.id, 60_000);
    const docs = await documentsOf(trawl.api, crawl.body.id);
    expect(docs[0].warning).toContain("no browser is available");
  });
});
