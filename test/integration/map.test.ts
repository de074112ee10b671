// POST /v2/map in both modes, through the official JS SDK: a sitemap index (plain, gzipped, missing and nested
// sitemaps), links of fetched pages, robots.txt, dedup, search ranking, limit, and 400s for every field.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startSitemapSite, type SitemapSite } from "../fixtures/sitemap-site.ts";
import { MODES, postJson, startTrawl, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: SitemapSite;
  let firecrawl: Firecrawl;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startSitemapSite(300), startTrawl({ mode })]);
    firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("lists sitemap URLs (index, gzip, nested, a missing sibling) and page links, deduplicated, robots.txt honoured", async () => {
    const { links } = await firecrawl.map(`${site.origin}/`);
    const urls = links.map((l) => l.url);
    for (const p of site.products) expect(urls, p).toContain(`${site.origin}${p}`);
    for (const p of ["/", "/about", "/pricing", "/blog/launch", "/team"]) expect(urls, p).toContain(`${site.origin}${p}`);
    expect(urls.filter((u) => u.includes("/private/"))).toEqual([]);
    expect(urls.filter((u) => u.includes("example.invalid"))).toEqual([]);
    expect(urls.filter((u) => u.includes("?"))).toEqual([]);
    expect(new Set(urls).size).toBe(urls.length);
    expect(urls.length).toBe(300 + 5);
    expect(links.find((l) => l.url === `${site.origin}/pricing`)).toMatchObject({ title: "Pricing plans", description: "Plans and prices of the shop" });
  });

  it("a crawl of a sitemap longer than one frontier message (303 URLs, 250 a message) fetches each of its URLs once", async () => {
    const job = await firecrawl.crawl(`${site.origin}/`, { sitemap: "only", limit: 1000, pollInterval: 0.2 });
    expect(job.status).toBe("completed");
    const urls = job.data.map((d) => (d.metadata?.sourceURL ?? "").replace(site.origin, "")).sort();
    const expected = ["/", "/pricing", `${site.products[0]}?ref=sitemap`, ...site.products].sort();
    expect(urls).toEqual(expected);
  });

  it("sitemap only / skip, ignoreQueryParameters false, limit", async () => {
    const only = (await firecrawl.map(`${site.origin}/`, { sitemap: "only" })).links.map((l) => l.url);
    expect(only).toContain(`${site.origin}${site.products[0]}`);
    expect(only).not.toContain(`${site.origin}/about`);
    expect(only.length).toBe(301); // products + /pricing
    const skip = (await firecrawl.map(`${site.origin}/`, { sitemap: "skip" })).links.map((l) => l.url);
    expect(skip).toContain(`${site.origin}/team`);
    expect(skip).not.toContain(`${site.origin}${site.products[0]}`);
    const withQuery = (await firecrawl.map(`${site.origin}/`, { sitemap: "include", ignoreQueryParameters: false })).links.map((l) => l.url);
    expect(withQuery).toContain(`${site.origin}/blog/launch?utm_source=home`);
    expect(withQuery).toContain(`${site.origin}${site.products[0]}?ref=sitemap`);
    const limited = await firecrawl.map(`${site.origin}/`, { limit: 7 });
    expect(limited.links.length).toBe(7);
  });

  it("search ranks by URL, title and description and keeps only matches", async () => {
    const res = await postJson(`${trawl.api}/v2/map`, { url: `${site.origin}/`, search: "pricing plans" });
    expect(res.status).toBe(200);
    expect(res.body.links[0]).toMatchObject({ url: `${site.origin}/pricing`, title: "Pricing plans" });
    expect(res.body.links.length).toBe(1);
    const items = await firecrawl.map(`${site.origin}/`, { search: "item-12", limit: 5 });
    expect(items.links.length).toBe(5);
    expect(items.links.every((l) => l.url.includes("item-12"))).toBe(true);
  });

  it("400 for bad values of every field; the anchor's error shape", async () => {
    const url = `${site.origin}/`;
    const bad: Record<string, unknown>[] = [
      {}, { url: "" }, { url: "ftp://x.example.com/" }, { url, search: 5 }, { url, sitemap: "sometimes" }, { url, includeSubdomains: "yes" },
      { url, ignoreQueryParameters: 1 }, { url, limit: 0 }, { url, limit: 100001 }, { url, limit: 2.5 }, { url, timeout: 10 },
      { url, location: { country: "DE" } }, { url, location: { languages: "de" } }, { url, maxDepth: 2 }, { url, origin: 5 },
    ];
    for (const body of bad) {
      const res = await postJson(`${trawl.api}/v2/map`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ success: false, code: "BAD_REQUEST" });
      expect(typeof res.body.error).toBe("string");
    }
    const ok = await postJson(`${trawl.api}/v2/map`, { url, location: { languages: ["de-DE"] }, limit: 100000, timeout: 30000, origin: "test", integration: "test" });
    expect(ok.status).toBe(200);
  });
});
