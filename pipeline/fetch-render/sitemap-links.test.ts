// A sitemap's URLs reach the frontier in messages of at most SITEMAP_LINKS_PER_MESSAGE, in order: one message is
// handled in one go on the event loop the API shares (embedded mode).
import { describe, expect, it } from "vitest";
import type { FetchTask } from "../../schemas/index.ts";
import { SITEMAP_LINKS_PER_MESSAGE, sitemapLinks } from "./fetch-render.ts";

const task = { crawlId: "c1", teamId: "", url: "https://s.test/", urlKey: "s.test/", depth: 0, attempt: 0, options: { limit: 10_000 }, kind: "discover", startUrl: "https://s.test/" } as unknown as FetchTask;

describe("sitemapLinks", () => {
  it("splits the URLs into messages of at most SITEMAP_LINKS_PER_MESSAGE, in order, each a sitemap's LinksDiscovered at depth 0", () => {
    const urls = Array.from({ length: 2 * SITEMAP_LINKS_PER_MESSAGE + 7 }, (_, i) => `https://s.test/p${i}`);
    const out = sitemapLinks(task, urls);
    expect(out.map((e) => (e.value as { links: string[] }).links.length)).toEqual([SITEMAP_LINKS_PER_MESSAGE, SITEMAP_LINKS_PER_MESSAGE, 7]);
    expect(out.flatMap((e) => (e.value as { links: string[] }).links)).toEqual(urls);
    for (const e of out) {
      expect(e).toMatchObject({ topic: "frontier.inbox", phase: 0, value: { type: "LinksDiscovered", crawlId: "c1", urlKey: "s.test/", url: "https://s.test/", depth: 0, source: "sitemap" } });
    }
    expect(new Set(out.map((e) => e.key)).size).toBe(1); // one key: the crawl's own partition, in order
  });

  it("makes no message of an empty sitemap", () => {
    expect(sitemapLinks(task, [])).toEqual([]);
  });
});
