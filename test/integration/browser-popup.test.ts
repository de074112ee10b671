// Popups against real Chromium with the defaults (blockAds on, RENDER=auto: the browser through waitFor and
// actions), in both modes (issue 50: a page that called window.open() killed the process, in the route handler).
// Pages open popups on load, through a target=_blank link an action clicks, and towards a private listener and
// another host (window.open, a form aimed at a new window, a blank window sent away, a link clicked by script). Each
// page converts, no popup asks anything of anyone (the listeners count TCP accepts: zero), a crawl of them goes
// through the render role, and the next scrape works. A page whose script navigates while the renderer reads it is
// read where it went (Playwright's refusal to read a navigating page was a 500 / a dead-lettered page), and one that
// moves on to a document whose load never ends times out as a page (Playwright's own time-out was a 500). Last,
// `trawl all --embedded` as its own process scrapes the window.open page and is still there to answer.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startCounter, type Counter } from "../fixtures/hostile-site.ts";
import { OPENER_TEXT, startPopupSite, type PopupSite } from "../fixtures/popup-site.ts";
import { killHard, launchEmbedded } from "./embedded-process.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { freePort } from "./own-infra.ts";

interface World {
  site: PopupSite;
  /** the private listener (127.0.0.1) and the other host (other.test, RESOLVE to 127.0.0.1) */
  privateTarget: Counter;
  other: Counter;
  close(): Promise<void>;
}

async function startWorld(): Promise<World> {
  const [privateTarget, other] = await Promise.all([startCounter(), startCounter()]);
  const site = await startPopupSite(`http://127.0.0.1:${privateTarget.port}`, `http://other.test:${other.port}`);
  return { site, privateTarget, other, close: async () => void (await Promise.all([site.close(), privateTarget.close(), other.close()])) };
}

/** No popup asked anything: no connection to either listener, no popup target asked of the site. */
function expectNoPopupTraffic(w: World): void {
  expect(w.privateTarget.accepts, "connections to the private listener").toBe(0);
  expect(w.other.accepts, "connections to the other host").toBe(0);
  expect(w.site.hits.filter((h) => h.startsWith("/popup-"))).toEqual([]);
}

describe.each(MODES)("popups (%s mode)", (mode) => {
  let trawl: Instance;
  let w: World;
  // Trawl runs in this process: what would have ended it (an error thrown into Playwright) is counted here
  const uncaught: unknown[] = [];
  const count = (err: unknown) => void uncaught.push(err);
  afterEach(() => expect(uncaught.splice(0).map(String)).toEqual([]));
  beforeAll(async () => {
    process.on("unhandledRejection", count).on("uncaughtException", count);
    w = await startWorld();
    trawl = await startTrawl({ mode, resolve: { "other.test": "127.0.0.1" } });
    // the defaults: ad blocking on, with its lists on disk (the old code crashed only there)
    for (const path of trawl.config.blockAdsLists.split(",")) expect(existsSync(path), path).toBe(true);
  });
  afterAll(async () => {
    process.off("unhandledRejection", count).off("uncaughtException", count);
    await trawl?.stop();
    await w?.close();
  });

  const scrape = async (path: string, more: Record<string, unknown>) => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${w.site.origin}${path}`, ...more });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.metadata.engine).toBe("chromium");
    expect(res.body.data.markdown).toContain(OPENER_TEXT);
    return res.body.data;
  };

  it("a page that calls window.open() on load converts; the popup is refused", async () => {
    await scrape("/open-on-load", { waitFor: 300 });
    expectNoPopupTraffic(w);
  });

  it("a target=_blank link clicked by an action: the action runs, the page converts, the popup is refused", async () => {
    const doc = await scrape("/blank-link", { actions: [{ type: "click", selector: "#blank" }, { type: "click", selector: "#blank-other" }, { type: "wait", milliseconds: 300 }, { type: "scrape" }] });
    expect(doc.actions.scrapes[0].url).toBe(`${w.site.origin}/blank-link`);
    expectNoPopupTraffic(w);
  });

  it("popups to a private address and another host make no connection", async () => {
    await scrape("/popups-elsewhere", { waitFor: 500 });
    await new Promise((r) => setTimeout(r, 100)); // a connection still on its way is counted
    expectNoPopupTraffic(w);
  });

  it("a page that navigates while it is read is read where it went, or before it left (not a 500: Playwright refuses to read a navigating page)", async () => {
    // the script's timer races the read: either the read sees the page move on (and reads the new one) or it ends
    // before the timer fires; under load either happens. What must never happen is a failure, or a mixed answer.
    const doc = await postJson(`${trawl.api}/v2/scrape`, { url: `${w.site.origin}/moves-on`, actions: [{ type: "executeJavascript", script: `setTimeout(() => { location.href = "/moved-here"; }, 30)` }] });
    expect(doc.status, JSON.stringify(doc.body).slice(0, 500)).toBe(200);
    const moved = doc.body.data.metadata.url === `${w.site.origin}/moved-here`;
    if (moved) expect(doc.body.data.markdown).toContain("MOVED HERE");
    else {
      expect(doc.body.data.metadata.url).toBe(`${w.site.origin}/moves-on`);
      expect(doc.body.data.markdown).not.toContain("MOVED HERE");
    }
  });

  it("a page that a script moved on before the read is read where it went", async () => {
    const doc = await postJson(`${trawl.api}/v2/scrape`, { url: `${w.site.origin}/moves-on`, actions: [{ type: "executeJavascript", script: `setTimeout(() => { location.href = "/moved-here"; }, 0)` }, { type: "wait", milliseconds: 1000 }] });
    expect(doc.status, JSON.stringify(doc.body).slice(0, 500)).toBe(200);
    expect(doc.body.data.markdown).toContain("MOVED HERE");
    expect(doc.body.data.metadata.url).toBe(`${w.site.origin}/moved-here`);
  });

  it("a page that moves on to a document whose load never ends times out as a page (408), not as a 500", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${w.site.origin}/moves-to-hang`, waitFor: 100, timeout: 6000 });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(408);
    expect(res.body.code).toBe("SCRAPE_TIMEOUT");
  });

  it("a crawl of the popup pages goes through the render role and completes; the next scrape works", async () => {
    // the crawler itself leaves the popups' targets alone (excludePaths), so that any visit to them is a popup's
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${w.site.origin}/open-on-load`, limit: 10, crawlEntireDomain: true, excludePaths: ["^/popup-"], scrapeOptions: { waitFor: 200 } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect((await waitForEnd(trawl.api, res.body.id, 90_000)).at(-1).status).toBe("completed");
    const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data as { markdown: string; metadata: { sourceURL: string; engine: string } }[]);
    expect(docs.map((d) => d.metadata.sourceURL).sort()).toEqual(["/blank-link", "/open-on-load", "/popups-elsewhere"].map((p) => `${w.site.origin}${p}`));
    for (const d of docs) {
      expect(d.metadata.engine, d.metadata.sourceURL).toBe("chromium");
      expect(d.markdown, d.metadata.sourceURL).toContain(OPENER_TEXT);
    }
    expect((await getJson(`${trawl.api}/v2/crawl/${res.body.id}/errors`)).body.errors).toEqual([]);
    const plain = await scrape("/plain", { waitFor: 100 });
    expect(plain.markdown).toContain("PLAIN PAGE");
    await new Promise((r) => setTimeout(r, 100));
    expectNoPopupTraffic(w);
  });
});

describe("popups, trawl all --embedded as its own process", () => {
  let w: World;
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-popup-"));
  beforeAll(async () => {
    w = await startWorld();
  });
  afterAll(async () => {
    await w?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("survives a page that calls window.open() and scrapes the next page", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const proc = await launchEmbedded(dataDir, port, { RESOLVE: `other.test:127.0.0.1` });
    try {
      const opened = await postJson(`${api}/v2/scrape`, { url: `${w.site.origin}/open-on-load`, waitFor: 300 }).catch((err: unknown) => ({ status: 0, body: { error: String(err) } }));
      expect(proc.child.exitCode, proc.output()).toBeNull();
      expect(opened.status, JSON.stringify(opened.body)).toBe(200);
      expect(opened.body.data.markdown).toContain(OPENER_TEXT);
      const plain = await postJson(`${api}/v2/scrape`, { url: `${w.site.origin}/plain`, waitFor: 100 });
      expect(plain.status, JSON.stringify(plain.body)).toBe(200);
      expect(plain.body.data.markdown).toContain("PLAIN PAGE");
      expect(proc.child.exitCode, proc.output()).toBeNull();
      expectNoPopupTraffic(w);
    } finally {
      await killHard(proc.child);
    }
  });
});
