// The cancel cache over the embedded store: "cancelled" (the sink's) answers cancelled crawls only, "ended"
// (fetch-render's and render's) also the crawls whose record completed or failed; a crawl found so stays so.
import { describe, expect, it } from "vitest";
import { CancelCache } from "./cancel-cache.ts";
import type { CrawlRecord, CrawlStatus } from "./crawl-store.ts";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";

const record = (crawlId: string, status: CrawlStatus, version: number): CrawlRecord => ({
  crawlId, version, teamId: "t", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
  webhook: "", status, total: 1, completed: status === "completed" ? 1 : 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: true,
  createdAt: 1, updatedAt: version, completedAt: status === "scraping" ? 0 : version, expiresAt: 1e15, error: "",
});

describe("CancelCache", () => {
  it("ended: crawls cancelled, completed or failed; a running or unknown crawl is not", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    await store.saveCrawls([record("run", "scraping", 1), record("done", "completed", 2), record("bad", "failed", 2), record("stop", "scraping", 1)]);
    await store.cancelCrawl("stop", 5);
    const ended = new CancelCache(store, 0, () => 0, "ended");
    expect([...(await ended.check(["run", "done", "bad", "stop", "unknown"]))].sort()).toEqual(["bad", "done", "stop"]);
    const cancelled = new CancelCache(store, 0, () => 0);
    expect([...(await cancelled.check(["run", "done", "bad", "stop", "unknown"]))]).toEqual(["stop"]);
  });

  it("a crawl that completes is seen once the cache's time has passed, and stays ended", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    await store.saveCrawls([record("c", "scraping", 1)]);
    let now = 0;
    const cache = new CancelCache(store, 1000, () => now, "ended");
    expect(await cache.check(["c"])).toEqual(new Set());
    await store.saveCrawls([record("c", "completed", 2)]);
    now = 500;
    expect(await cache.check(["c"])).toEqual(new Set()); // read less than a second ago
    now = 1500;
    expect(await cache.check(["c"])).toEqual(new Set(["c"]));
  });
});
