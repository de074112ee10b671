// The branding format (Firecrawl v2) in both modes with real Chromium: a fixture page with known CSS, a logo, og:image
// and a favicon gives exactly the expected profile through the official JS SDK's scrape (the API's renderer) and
// through a crawl (the render stage, then convert); billed 1 credit as a page. With RENDER=never it is a 400 naming
// the reason, as a screenshot is.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const PAGE = `<!doctype html><html><head><title>Acme Tools</title>
<meta property="og:site_name" content="Acme Tools"><meta property="og:image" content="/og.png"><link rel="icon" href="/favicon.ico">
<style>
html { background: #0B1020; }
body { margin: 0; background: #0B1020; color: #E5E7EB; font-family: "Brand Sans", Arial, sans-serif; font-size: 18px; line-height: 27px; }
header { background: #111827; }
h1, h2 { font-family: "Brand Serif", Georgia, serif; color: #FFFFFF; }
h1 { font-size: 44px; line-height: 52.8px; }
h2 { font-size: 30px; }
a { color: #38BDF8; }
.muted { color: #94A3B8; }
code { font-family: "Brand Mono", monospace; }
button { font: inherit; }
.btn { background: #F97316; color: #FFFFFF; border: 0; border-radius: 6px; padding: 8px 16px; }
.ghost { background: transparent; border: 2px solid #38BDF8; border-radius: 6px; padding: 6px 14px; }
.badge { background: #22C55E; color: #0B1020; }
</style></head>
<body><header><img class="site-logo" src="/logo.png" alt="Acme" width="120" height="40"><nav><a href="/docs">Docs</a> <a href="/pricing">Pricing</a></nav></header>
<main><h1>Build faster</h1><span class="badge">New</span>
<p>${"Acme makes the tools that teams use to build, test and ship their software every day. ".repeat(3)}</p>
<p class="muted">${"Quieter supporting text, set in a softer grey. ".repeat(2)}</p>
<h2>Features</h2><p>Use <code>acme run</code></p>
<button class="btn">Get started</button> <button class="btn">Sign up</button> <a class="ghost" role="button" href="/demo">Demo</a></main></body></html>`;

// a page whose script breaks the reading of styles
const HOSTILE = `<html><body><p>${"Text of a page that hides its styles. ".repeat(3)}</p><script>window.getComputedStyle = () => { throw new Error("no styles here"); };</script></body></html>`;

// a 1x1 PNG
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

async function site(): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (["/", "/docs", "/pricing", "/demo"].includes(req.url ?? "")) return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (req.url === "/hostile") return void res.writeHead(200, { "content-type": "text/html" }).end(HOSTILE);
    if (/\.(png|ico)$/.test(req.url ?? "")) return void res.writeHead(200, { "content-type": "image/png" }).end(PNG);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

const expected = (origin: string) => ({
  colorScheme: "dark",
  brandName: "Acme Tools",
  logo: `${origin}/logo.png`,
  fonts: [{ family: "Brand Sans" }, { family: "Brand Serif" }, { family: "Brand Mono" }],
  colors: { primary: "#F97316", secondary: "#38BDF8", accent: "#22C55E", background: "#0B1020", textPrimary: "#E5E7EB", textSecondary: "#94A3B8", link: "#38BDF8" },
  typography: {
    fontFamilies: { primary: "Brand Sans", heading: "Brand Serif", code: "Brand Mono" },
    fontStacks: { primary: ["Brand Sans", "Arial", "sans-serif"], heading: ["Brand Serif", "Georgia", "serif"], body: ["Brand Sans", "Arial", "sans-serif"], paragraph: ["Brand Sans", "Arial", "sans-serif"] },
    fontSizes: { h1: "44px", h2: "30px", body: "18px" },
    lineHeights: { heading: 1.2, body: 1.5 },
  },
  spacing: { borderRadius: "6px" },
  components: {
    buttonPrimary: { background: "#F97316", textColor: "#FFFFFF", borderRadius: "6px" },
    buttonSecondary: { textColor: "#38BDF8", borderColor: "#38BDF8", borderRadius: "6px" },
  },
  images: { logo: `${origin}/logo.png`, favicon: `${origin}/favicon.ico`, ogImage: `${origin}/og.png` },
});

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let s: Awaited<ReturnType<typeof site>>;
  beforeAll(async () => {
    [s, trawl] = await Promise.all([site(), startTrawl({ mode, render: "auto", renderConcurrency: 2 })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await s?.close();
  });

  it("scrape through the SDK: the profile of the rendered page, exactly; 1 credit", async () => {
    const fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
    const doc = await fc.scrape(`${s.origin}/`, { formats: ["markdown", { type: "branding" }], timeout: 30_000 });
    expect(doc.branding).toEqual(expected(s.origin));
    expect(doc.markdown).toContain("Build faster");
    expect(doc.metadata?.engine).toBe("chromium");
    expect(doc.metadata?.creditsUsed).toBe(1);
    // the string form, alone
    const only = await fc.scrape(`${s.origin}/`, { formats: ["branding"], timeout: 30_000 });
    expect(only.branding).toEqual(expected(s.origin));
    expect(only.markdown).toBeUndefined();
  });

  it("a page whose scripts break the reading fails with a page error, not a bug", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${s.origin}/hostile`, formats: ["branding"] });
    expect(res.body).toMatchObject({ success: false, code: "SCRAPE_SITE_ERROR", error: expect.stringContaining("the page's branding could not be read: Error: no styles here") });
  });

  it("a crawl: pages go through the render stage and carry their branding", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${s.origin}/`, limit: 10, scrapeOptions: { formats: ["branding"] } });
    expect(res.status).toBe(200);
    await waitForEnd(trawl.api, res.body.id, 90_000);
    const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data) as { branding: unknown; metadata: { sourceURL: string; creditsUsed: number } }[];
    expect(docs.map((d) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(["/", "/demo", "/docs", "/pricing"]);
    for (const d of docs) {
      expect(d.branding, d.metadata.sourceURL).toEqual(expected(s.origin));
      expect(d.metadata.creditsUsed).toBe(1);
    }
  });
});

describe("RENDER=never", () => {
  let trawl: Instance;
  let s: Awaited<ReturnType<typeof site>>;
  beforeAll(async () => {
    [s, trawl] = await Promise.all([site(), startTrawl({ mode: "embedded", render: "never" })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await s?.close();
  });

  it("a branding scrape is a 400 naming the reason", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${s.origin}/`, formats: [{ type: "branding" }] });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("branding needs a browser, and this server runs with RENDER=never");
  });
});
