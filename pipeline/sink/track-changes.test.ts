import { describe, expect, it } from "vitest";
import type { CrawlPage } from "../../schemas/index.ts";
import { trackChanges } from "./track-changes.ts";

const page = (crawlId: string, markdown: string, json?: unknown): CrawlPage => ({
  crawlId, teamId: "t", urlKey: "k", credits: 1,
  document: { markdown, ...(json !== undefined ? { json } : {}), metadata: { sourceURL: "http://s/p", url: "http://s/p", statusCode: 200, scrapeId: "x" } },
});
const freshness = { tag: "", modes: ["git-diff" as const, "json" as const], optionsHash: "o", contentHash: "h2", etag: '"e"', links: ["http://s/q"] };

describe("trackChanges", () => {
  it("compares with the previous job's snapshot and returns the new snapshot (validators, links, stored document)", () => {
    const p = page("c2", "b\n");
    const s = trackChanges(p, freshness, null, 5);
    expect(p.document.changeTracking).toEqual({ previousScrapeAt: null, changeStatus: "new", visibility: "visible" });
    expect(s).toMatchObject({ teamId: "t", urlKey: "k", url: "http://s/p", crawlId: "c2", scrapedAt: 5, changeStatus: "new", contentHash: "h2", etag: '"e"', links: ["http://s/q"] });
    expect(JSON.parse(s.doc).changeTracking).toBeUndefined();
    const next = page("c3", "c\n");
    trackChanges(next, freshness, s, 9);
    expect(next.document.changeTracking).toMatchObject({ changeStatus: "changed", previousScrapeAt: new Date(5).toISOString(), diff: { text: "@@ -1 +1 @@\n-b\n+c\n" } });
  });

  it("answers a replay of the same job with what it answered then (its snapshot was written before a crash)", () => {
    const first = page("c2", "new text\n");
    const previous = trackChanges(page("c1", "old text\n"), freshness, null, 1);
    const taken = trackChanges(first, freshness, previous, 5);
    expect(first.document.changeTracking).toMatchObject({ changeStatus: "changed" });
    // the replay reads the job's own snapshot as the latest one: not "same as itself"
    const replay = page("c2", "new text\n");
    const again = trackChanges(replay, freshness, taken, 7);
    expect(replay.document.changeTracking).toEqual(first.document.changeTracking);
    expect(again.scrapedAt).toBe(5);
  });

  it("keeps json extracted for the json mode only in the snapshot, not in the document", () => {
    const p = page("c2", "a", { price: "1" });
    const s = trackChanges(p, { ...freshness, trackingJson: true }, null, 5);
    expect(p.document.json).toBeUndefined();
    expect(JSON.parse(s.doc).json).toEqual({ price: "1" });
  });
});
