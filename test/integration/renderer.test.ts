// The Chromium renderer on its own, against real local servers: pages built by scripts, actions, screenshots,
// the private-address rule on every request the browser makes, and a browser killed in the middle of a page.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumRenderer } from "../../pipeline/browser/chromium-renderer.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startProbeTarget, startScriptSite, type ScriptSite } from "../fixtures/script-site.ts";

const log = createLogger("silent");
const chromium = (allowPrivate: boolean) => new ChromiumRenderer({
  executablePath: "/usr/bin/chromium", concurrency: 2, allowPrivate, maxBytes: 10_000_000, userAgent: "TrawlTest", log,
});

describe("ChromiumRenderer", () => {
  let site: ScriptSite;
  let probe: Awaited<ReturnType<typeof startProbeTarget>>;
  let renderer: ChromiumRenderer;
  beforeAll(async () => {
    probe = await startProbeTarget();
    site = await startScriptSite(probe.origin);
    renderer = chromium(true);
  });
  afterAll(async () => {
    await renderer?.close();
    await site?.close();
    await probe?.close();
  });

  it("returns the DOM after scripts: after load, from an API, after a delay, after a redirect by script", async () => {
    const [load, api, delay, redirect] = await Promise.all([
      renderer.render({ url: `${site.origin}/after-load`, timeoutMs: 15_000 }),
      renderer.render({ url: `${site.origin}/from-api`, timeoutMs: 15_000 }),
      renderer.render({ url: `${site.origin}/after-delay`, timeoutMs: 15_000, waitForMs: 1500 }),
      renderer.render({ url: `${site.origin}/script-redirect`, timeoutMs: 15_000 }),
    ]);
    expect(load.body).toContain("Built by script");
    expect(load.statusCode).toBe(200);
    expect(api.body).toContain("API CONTENT");
    expect(delay.body).toContain("DELAYED CONTENT");
    expect(redirect.finalUrl).toBe(`${site.origin}/redirect-target`);
    expect(redirect.body).toContain("REDIRECT TARGET REACHED");
  });

  it("runs actions: click, write + press, scroll, wait for a selector, scrape, executeJavascript, screenshots", async () => {
    const clicked = await renderer.render({
      url: `${site.origin}/after-click`, timeoutMs: 20_000,
      actions: [
        { type: "click", selector: "#more" }, { type: "wait", selector: "#out p" }, { type: "scrape" },
        { type: "executeJavascript", script: "return document.querySelectorAll('p').length" },
        { type: "executeJavascript", script: "document.title" },
        { type: "screenshot", fullPage: true },
      ],
    });
    expect(clicked.body).toContain("CLICKED CONTENT");
    expect(clicked.actions?.scrapes[0]).toMatchObject({ url: `${site.origin}/after-click` });
    expect(clicked.actions?.scrapes[0]?.html).toContain("CLICKED CONTENT");
    expect(clicked.actions?.javascriptReturns).toEqual([{ type: "number", value: 1 }, { type: "string", value: "After click" }]);
    expect(clicked.actions?.screenshots[0]).toMatch(/^data:image\/png;base64,iVBOR/);

    const typed = await renderer.render({ url: `${site.origin}/typing`, timeoutMs: 15_000, actions: [{ type: "click", selector: "#q" }, { type: "write", text: "hello" }, { type: "press", key: "Enter" }] });
    expect(typed.body).toContain("TYPED hello");

    const scrolled = await renderer.render({ url: `${site.origin}/infinite`, timeoutMs: 20_000, actions: [{ type: "scroll" }, { type: "wait", milliseconds: 200 }, { type: "scroll" }, { type: "wait", milliseconds: 200 }, { type: "scroll" }, { type: "wait", milliseconds: 200 }] });
    expect(scrolled.body).toContain("ITEM 40");

    const shot = await renderer.render({ url: `${site.origin}/after-load`, timeoutMs: 15_000, screenshot: { quality: 50, viewport: { width: 800, height: 600 } }, mobile: true });
    expect(shot.screenshot).toMatch(/^data:image\/jpeg;base64,\/9j\//);
  });

  it("a failing action fails the page with SCRAPE_ACTION_ERROR", async () => {
    await expect(renderer.render({ url: `${site.origin}/after-load`, timeoutMs: 2500, actions: [{ type: "click", selector: "#missing" }] }))
      .rejects.toMatchObject({ code: "SCRAPE_ACTION_ERROR" });
  });

  it("refuses every request to a private address while private targets are off (img, iframe, fetch, WebSocket)", async () => {
    // The fixtures are all on loopback, so the page under test is handed to the browser as already fetched (the
    // `document` of RENDER=auto); everything the page then loads itself goes through the guard. The probe target is
    // another loopback server: with private targets allowed it is reached (the control), without it is not.
    const probeHtml = await (await fetch(`${site.origin}/probe`)).text();
    const document = { finalUrl: `${site.origin}/probe`, statusCode: 200, contentType: "text/html", body: probeHtml };
    const guarded = chromium(false);
    try {
      const refused = await guarded.render({ url: `${site.origin}/probe`, timeoutMs: 15_000, waitForMs: 800, document });
      expect(refused.body).toContain("PROBE DONE");
      expect(probe.hits).toEqual([]);
      expect(refused.refused?.map((r) => new URL(r.url).pathname).sort()).toEqual(["/fetch", "/frame", "/img", "/ws"]);
      await expect(guarded.render({ url: `${site.origin}/after-load`, timeoutMs: 5000 })).rejects.toMatchObject({ code: "SCRAPE_PRIVATE_TARGET_REFUSED" });
    } finally {
      await guarded.close();
    }
    await renderer.render({ url: `${site.origin}/probe`, timeoutMs: 15_000, waitForMs: 800, document });
    expect(probe.hits.sort()).toEqual(expect.arrayContaining(["/fetch", "/frame", "/img"]));
  });

  it("a page whose responses exceed the byte cap fails SCRAPE_TOO_LARGE, not as a private address", async () => {
    const small = new ChromiumRenderer({ executablePath: "/usr/bin/chromium", concurrency: 1, allowPrivate: true, maxBytes: 200, userAgent: "TrawlTest", log });
    try {
      const size = (await (await fetch(`${site.origin}/static`)).text()).length;
      expect(size).toBeGreaterThan(200);
      await expect(small.render({ url: `${site.origin}/static`, timeoutMs: 10_000 })).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
    } finally {
      await small.close();
    }
  });

  it("a browser killed in the middle of a page is replaced and the page tried again", async () => {
    const pid = await renderer.browserPid();
    const launches = renderer.launches;
    const pending = renderer.render({ url: `${site.origin}/slow`, timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 700)); // the page is waiting for the slow server
    process.kill(pid as number, "SIGKILL");
    const page = await pending;
    expect(page.body).toContain("SLOW PAGE DONE");
    expect(renderer.launches).toBe(launches + 1);
    expect(await renderer.browserPid()).not.toBe(pid);
  });
});
