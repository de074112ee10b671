// Crawl semantics through the public API, in both modes: scope, sitemaps, robots.txt, politeness, redirects,
// charsets, and every crawl option, against several host names served on loopback (RESOLVE override).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startVhostSite, type VhostSite } from "../fixtures/vhost-site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: VhostSite;

  beforeAll(async () => {
    site = await startVhostSite();
    trawl = await startTrawl({ mode, resolve: site.resolve });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  async function crawl(body: Record<string, unknown>) {
    const res = await postJson(`${trawl.api}/v2/crawl`, { limit: 100, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
    const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data);
    const errors = (await getJson(`${trawl.api}/v2/crawl/${res.body.id}/errors`)).body;
    const rel = (u: string) => u.replace(`http://site.test:${site.port}`, "").replace(`:${site.port}`, "");
    return { id: res.body.id as string, last, docs, errors, urls: docs.map((d: any) => rel(d.metadata.sourceURL)).sort() };
  }

  it("default: child paths, sitemaps (index, gzip, a missing one), robots.txt, Retry-After, redirects, meta refresh, charsets", async () => {
    const { last, docs, errors, urls } = await crawl({ url: `${site.origin}/docs/` });
    expect(urls).toEqual([
      "/docs/", "/docs/a", "/docs/b?x=1", "/docs/b?x=2", "/docs/deep/1", "/docs/deep/2", "/docs/deep/3", "/docs/euckr",
      "/docs/meta-refresh", "/docs/orphan-1", "/docs/orphan-2?a=1&b=2", "/docs/orphan-3", "/docs/refreshed", "/docs/sjis", "/docs/slow-429",
    ]);
    expect(last.status).toBe("completed");
    expect(errors.robotsBlocked).toEqual([`${site.origin}/docs/private/secret`]);
    expect(site.hits.get("site.test/docs/private/secret") ?? 0).toBe(0);
    expect(errors.errors).toEqual([expect.objectContaining({ url: `${site.origin}/docs/redirect-out`, code: "SCRAPE_REDIRECT_OUT_OF_SCOPE" })]);
    expect(last.warning).toMatch(/robots\.txt/);
    expect(last.warning).toMatch(/\/scrape endpoint/);
    expect(site.hits.get("site.test/docs/slow-429")).toBe(2); // the 429 was retried after its Retry-After
    expect(site.hits.get("site.test/robots.txt")).toBe(1); // once per host, cached
    const text = (p: string) => docs.find((d: any) => d.metadata.sourceURL.endsWith(p)).markdown as string;
    expect(text("/docs/sjis")).toContain("日本語");
    expect(text("/docs/euckr")).toContain("한국어");
    for (const host of ["a.site.test", "other.test"]) expect([...site.hits.keys()].some((k) => k.startsWith(host + "/docs"))).toBe(false);
  });

  it("sitemap: skip reads no sitemap, only follows no page link", async () => {
    const skip = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip" });
    expect(skip.urls.some((u) => u.includes("orphan"))).toBe(false);
    expect(skip.urls).toContain("/docs/a");
    const only = await crawl({ url: `${site.origin}/docs/`, sitemap: "only" });
    expect(only.urls).toEqual(["/docs/", "/docs/orphan-1", "/docs/orphan-2?a=1&b=2", "/docs/orphan-3"]);
  });

  it("crawlEntireDomain, allowSubdomains and allowExternalLinks widen the scope", async () => {
    const entire = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", crawlEntireDomain: true });
    expect(entire.urls).toContain("/other/page");
    const sub = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", allowSubdomains: true });
    expect(sub.urls).toContain("http://a.site.test/docs/sub");
    expect(sub.urls.some((u) => u.includes("other.test"))).toBe(false);
    const ext = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", allowExternalLinks: true });
    expect(ext.urls).toContain("http://other.test/docs/ext");
    expect(ext.urls).not.toContain("http://other.test/docs/ext-2"); // one hop out only
  });

  it("includePaths, excludePaths and regexOnFullURL", async () => {
    const inc = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", includePaths: ["^/docs/deep/"] });
    expect(inc.urls).toEqual(["/docs/", "/docs/deep/1", "/docs/deep/2", "/docs/deep/3"]);
    const exc = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", excludePaths: ["deep", "^/docs/b"] });
    expect(exc.urls.some((u) => u.includes("deep") || u.startsWith("/docs/b"))).toBe(false);
    expect(exc.urls).toContain("/docs/a");
    const full = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", includePaths: ["\\?x=1$"], regexOnFullURL: true });
    expect(full.urls).toEqual(["/docs/", "/docs/b?x=1"]);
  });

  it("maxDiscoveryDepth, ignoreQueryParameters, deduplicateSimilarURLs, limit", async () => {
    const depth = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", maxDiscoveryDepth: 1 });
    expect(depth.urls).toContain("/docs/deep/1");
    expect(depth.urls).not.toContain("/docs/deep/2");
    const zero = await crawl({ url: `${site.origin}/docs/`, maxDiscoveryDepth: 0 });
    expect(zero.urls).toEqual(["/docs/"]);
    const noQuery = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", ignoreQueryParameters: true });
    expect(noQuery.urls.filter((u) => u.startsWith("/docs/b"))).toHaveLength(1);
    const limited = await crawl({ url: `${site.origin}/docs/`, limit: 3 });
    expect(limited.last).toMatchObject({ status: "completed", completed: 3, total: 3 });
    const exact = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", deduplicateSimilarURLs: false, includePaths: ["^/docs/deep/1$"] });
    expect(exact.urls).toEqual(["/docs/", "/docs/deep/1"]);
  });

  it("ignoreRobotsTxt fetches what robots.txt disallows", async () => {
    const r = await crawl({ url: `${site.origin}/docs/`, sitemap: "skip", ignoreRobotsTxt: true });
    expect(r.urls).toContain("/docs/private/secret");
    expect(r.errors.robotsBlocked).toEqual([]);
  });

  it("a start URL blocked by robots.txt ends the crawl with a warning", async () => {
    const r = await crawl({ url: `${site.origin}/blocked/start` });
    expect(r.last.status).toBe("completed");
    expect(r.last.completed).toBe(0);
    expect(r.errors.robotsBlocked).toEqual([`${site.origin}/blocked/start`]);
    expect(r.last.warning).toMatch(/robots\.txt/);
  });

  it("warns when a deep start finds one page", async () => {
    const r = await crawl({ url: `${site.origin}/docs/a`, sitemap: "skip" });
    expect(r.last.completed).toBe(1);
    expect(r.last.warning).toContain("Only 1 result(s) found");
    expect(r.last.warning).toContain("crawlEntireDomain=true");
    expect(r.last.warning).toContain(`http://site.test:${site.port}/`);
  });

  it("rejects patterns RE2 cannot run, naming them", async () => {
    for (const pattern of ["(?=docs)", "(a)\\1", "["]) {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, includePaths: [pattern] });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain(`Invalid includePaths pattern "${pattern}"`);
    }
    const tooMany = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, excludePaths: Array.from({ length: 101 }, (_, i) => `p${i}`) });
    expect(tooMany.status).toBe(400);
  });
});

describe("politeness", () => {
  let trawl: Instance;
  let site: VhostSite;
  beforeAll(async () => {
    site = await startVhostSite({ delayMs: 50 });
    trawl = await startTrawl({ mode: "embedded", resolve: site.resolve });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("delay spaces the fetches of a crawl and runs them one at a time", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, sitemap: "skip", limit: 5, delay: 0.3 });
    await waitForEnd(trawl.api, res.body.id);
    const starts = site.starts.filter((s) => s.path.startsWith("site.test/docs/")).map((s) => s.at);
    expect(starts.length).toBe(5);
    // measured where the requests arrive: on a loaded machine one arrival can lag its send by tens of ms, so the
    // bound leaves room below the 300 ms delay (without delay, these fetches would start together)
    for (let i = 1; i < starts.length; i++) expect(starts[i]! - starts[i - 1]!).toBeGreaterThanOrEqual(240);
    expect(site.maxInFlight).toBe(1);
  });

  it("maxConcurrency caps the fetches in flight", async () => {
    site.maxInFlight = 0;
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, sitemap: "skip", limit: 12, maxConcurrency: 2 });
    await waitForEnd(trawl.api, res.body.id);
    expect(site.maxInFlight).toBe(2);
  });

  it("lists running crawls in /v2/crawl/active and /v2/crawl/ongoing until they end", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, sitemap: "skip", limit: 4, delay: 0.5 });
    const active = await getJson(`${trawl.api}/v2/crawl/active`);
    expect(active.body.success).toBe(true);
    const entry = active.body.crawls.find((c: any) => c.id === res.body.id);
    expect(entry).toMatchObject({ teamId: "bypass", url: `${site.origin}/docs/` });
    expect(Math.abs(Date.parse(entry.created_at) - Date.now())).toBeLessThan(5000);
    expect((await getJson(`${trawl.api}/v2/crawl/ongoing`)).body.crawls.map((c: any) => c.id)).toContain(res.body.id);
    await waitForEnd(trawl.api, res.body.id);
    expect((await getJson(`${trawl.api}/v2/crawl/active`)).body.crawls.map((c: any) => c.id)).not.toContain(res.body.id);
  });
});
