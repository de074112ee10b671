// PROXY_SERVER: every page fetch of a crawl and of POST /v2/scrape goes through the outbound proxy, with its
// Basic credentials (the browser's requests too, in both modes); the private-target rule still holds for what is fetched through it.
// http pages are asked for in absolute form (`GET http://host/path`), as browsers do: common proxies refuse `CONNECT host:80`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startProxy, type ProxySeen, type TestProxy } from "../fixtures/proxy.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { UndiciFetcher } from "../../pipeline/fetch-render/fetcher.ts";
import type { Config } from "../../pipeline/runtime/config.ts";

const BASIC = `Basic ${Buffer.from("crawler:s3cret").toString("base64")}`;
/** An http page asked of the proxy as a browser asks: absolute form, with the credentials (never a CONNECT to port 80). */
const absoluteForm = (s: ProxySeen) => s.method === "GET" && s.target.startsWith("http://docs.internal.test/") && s.auth === BASIC;

/** A fixture site whose host name only the proxy knows (a page fetched without the proxy would fail), and Trawl set to use the proxy with Basic credentials. */
function proxied(overrides: Partial<Config>): { proxy: TestProxy; site: FixtureSite; trawl: Instance } {
  const env = {} as { proxy: TestProxy; site: FixtureSite; trawl: Instance };
  beforeAll(async () => {
    env.site = await startFixtureSite();
    env.proxy = await startProxy({ "docs.internal.test:80": new URL(env.site.origin).host });
    env.trawl = await startTrawl({ ...overrides, proxyServer: env.proxy.url, proxyUsername: "crawler", proxyPassword: "s3cret" });
  });
  afterAll(async () => {
    await env.trawl?.stop();
    await env.site?.close();
    await env.proxy?.close();
  });
  return env;
}

describe("outbound proxy (embedded mode: the fetcher is the same in both)", () => {
  const env = proxied({ mode: "embedded" });

  it("a crawl fetches every page through the proxy, authenticated", async () => {
    const res = await postJson(`${env.trawl.api}/v2/crawl`, { url: "http://docs.internal.test/docs/", limit: 1000 });
    const status = await waitForEnd(env.trawl.api, res.body.id);
    expect(status.at(-1).status).toBe("completed");
    const docs = (await allChunks(env.trawl.api, res.body.id)).flatMap((c) => c.body.data);
    expect(docs.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
    expect(env.proxy.seen.length).toBeGreaterThan(0);
    expect(env.proxy.seen.filter((s) => !absoluteForm(s))).toEqual([]);
  });

  it("POST /v2/scrape goes through it too (the host exists only behind the proxy)", async () => {
    const res = await postJson(`${env.trawl.api}/v2/scrape`, { url: "http://docs.internal.test/docs/about", proxy: "basic" });
    expect(res.status).toBe(200);
    expect(res.body.data.markdown).toContain("About these docs.");
  });
});

describe("outbound proxy and the private-target rule", () => {
  it("a host that resolves to a private address is refused before the proxy is asked", async () => {
    const proxy = await startProxy();
    const fetcher = new UndiciFetcher({ userAgent: "t", maxBytes: 1e6, maxRedirects: 3, allowPrivate: false, proxy: { uri: proxy.url } });
    try {
      for (const url of ["http://localhost:9/", "http://127.0.0.1:9/"]) {
        await expect(fetcher.fetch({ url, timeoutMs: 2000 }), url).rejects.toMatchObject({ code: "SCRAPE_PRIVATE_TARGET_REFUSED" });
      }
      expect(proxy.seen).toHaveLength(0);
    } finally {
      await fetcher.close();
      await proxy.close();
    }
  });
});

describe.each(MODES)("outbound proxy and the browser (%s mode)", (mode) => {
  const env = proxied({ mode, render: "always" });

  it("a page that needs a browser is loaded through the proxy (the host exists only behind it)", async () => {
    const before = env.proxy.seen.length;
    const res = await postJson(`${env.trawl.api}/v2/scrape`, { url: "http://docs.internal.test/docs/about", waitFor: 100 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.metadata.engine).toBe("chromium");
    expect(res.body.data.markdown).toContain("About these docs.");
    const mine = env.proxy.seen.slice(before);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((s) => !absoluteForm(s))).toEqual([]);
  });

  it("a RENDER=always crawl renders every page, each request through the proxy", async () => {
    const res = await postJson(`${env.trawl.api}/v2/crawl`, { url: "http://docs.internal.test/docs/", limit: 8 });
    const status = await waitForEnd(env.trawl.api, res.body.id, 90_000);
    expect(status.at(-1).status, JSON.stringify(status.at(-1))).toBe("completed");
    const docs = (await allChunks(env.trawl.api, res.body.id)).flatMap((c) => c.body.data);
    const paths = docs.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname);
    expect(new Set(paths).size).toBe(8);
    expect(paths.filter((p: string) => !expectedDocPaths().includes(p))).toEqual([]);
    const html = docs.filter((d: { metadata: { contentType?: string } }) => /html/.test(d.metadata.contentType ?? ""));
    expect(html.length).toBeGreaterThan(0);
    for (const d of html) expect(d.metadata.engine, d.metadata.sourceURL).toBe("chromium");
    expect(env.proxy.seen.filter((s) => !absoluteForm(s))).toEqual([]);
  });
});
