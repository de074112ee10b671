import { describe, expect, it } from "vitest";
import { LinkSet, rankLinks } from "./map-rank.ts";

describe("LinkSet", () => {
  it("merges URLs with the crawl's dedup key and keeps the first, adding a missing title", () => {
    const set = new LinkSet(true);
    set.add({ url: "https://www.example.com/a/" });
    set.add({ url: "https://example.com/a", title: "A" });
    set.add({ url: "http://example.com/a/index.html" });
    set.add({ url: "https://example.com/b?utm=1" });
    set.add({ url: "https://example.com/b?utm=2", description: "B" });
    expect(set.links()).toEqual([{ url: "https://www.example.com/a/", title: "A" }, { url: "https://example.com/b", description: "B" }]);
  });

  it("keeps query strings apart when ignoreQueryParameters is false", () => {
    const set = new LinkSet(false);
    for (const url of ["https://e.com/p?x=1", "https://e.com/p?x=2", "https://e.com/p?x=1"]) set.add({ url });
    expect(set.links().map((l) => l.url)).toEqual(["https://e.com/p?x=1", "https://e.com/p?x=2"]);
  });
});

describe("rankLinks", () => {
  const links = [
    { url: "https://e.com/blog/post-1", title: "Launch" },
    { url: "https://e.com/docs/install", title: "Install guide", description: "How to set up" },
    { url: "https://e.com/pricing", title: "Pricing plans", description: "Plans" },
    { url: "https://e.com/plans-old" },
  ];
  it("drops links matching no word and ranks title over URL over description, phrases first", () => {
    expect(rankLinks(links, "pricing plans").map((l) => l.url)).toEqual(["https://e.com/pricing", "https://e.com/plans-old"]);
    expect(rankLinks(links, "install").map((l) => l.url)).toEqual(["https://e.com/docs/install"]);
    expect(rankLinks(links, "nothing")).toEqual([]);
  });
  it("returns the links unchanged for a query without words", () => {
    expect(rankLinks(links, " -- ")).toBe(links);
  });
});
