// The sink's part of the change feed: one crawl.changes record per new / changed page (none for a same page), before
// the page's PageDone, and the same record again when a replay finds the page already stored.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CrawlPage } from "../../schemas/index.ts";
import { validator } from "../../schemas/index.ts";
import type { Consumed, Emission } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { CancelCache } from "../store/cancel-cache.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { EmbeddedSnapshotStore } from "../store/snapshot-store.ts";
import { SinkProcessor } from "./sink.ts";

const freshness = { tag: "", modes: ["git-diff" as const], optionsHash: "o" };
const msg = (crawlId: string, urlKey: string, markdown: string): Consumed<CrawlPage> => ({
  topic: "crawl.pages", partition: 0, offset: "0", key: crawlId,
  value: {
    crawlId, teamId: "t", urlKey, credits: 1, freshness,
    document: { markdown, metadata: { url: `https://s.test/${urlKey}`, sourceURL: `https://s.test/${urlKey}`, scrapeId: `${crawlId}-${urlKey}`, statusCode: 200 } },
  },
});

describe("sink: the change feed", () => {
  it("records new and changed pages on crawl.changes, not same ones, and a replay gives the identical record", async () => {
    let t = 1_000;
    const clock = { now: () => t };
    const dir = mkdtempSync(join(tmpdir(), "feed-"));
    const store = await EmbeddedCrawlStore.open(null, t);
    // c2 still runs when its pages are replayed (their events are announced again only then)
    await store.saveCrawls([{ crawlId: "c2", version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "scraping", total: 2, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0,
      discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true } }]);
    const memory = await EmbeddedSnapshotStore.open(dir);
    const sink = new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log: createLogger("silent"), snapshots: memory });
    const run = async (...msgs: Consumed<CrawlPage>[]): Promise<Emission[]> => {
      const batch = sink.createBatch();
      await sink.prepare(msgs, batch);
      const out: Emission[] = [];
      for (const m of msgs) out.push(...(await sink.handle(m, batch)));
      await sink.beforeProduce(batch);
      return out;
    };
    const changes = (out: Emission[]) => out.filter((e) => e.topic === "crawl.changes").map((e) => e.value as Record<string, unknown>);

    const first = await run(msg("c1", "a", "one\n"), msg("c1", "b", "two\n"));
    expect(first.map((e) => e.topic)).toEqual(["crawl.events", "crawl.changes", "frontier.inbox", "crawl.events", "crawl.changes", "frontier.inbox"]);
    expect(changes(first)).toEqual([
      { changeId: "c1|a", crawlId: "c1", teamId: "t", url: "https://s.test/a", urlKey: "a", tag: "", changeStatus: "new", visibility: "visible", previousScrapeAt: null, at: 1_000, statusCode: 200 },
      expect.objectContaining({ changeId: "c1|b", changeStatus: "new" }),
    ]);
    expect(first.filter((e) => e.topic === "crawl.changes").every((e) => e.key === "c1" && e.phase === 0)).toBe(true);
    expect(changes(first).every((c) => validator("crawl-change")(c))).toBe(true);

    t = 2_000;
    const second = await run(msg("c2", "a", "one\n"), { ...msg("c2", "b", "three\n"), value: { ...msg("c2", "b", "three\n").value, kind: "batch" } });
    expect(changes(second)).toEqual([{
      changeId: "c2|b", crawlId: "c2", teamId: "t", kind: "batch", url: "https://s.test/b", urlKey: "b", tag: "", changeStatus: "changed", visibility: "visible",
      previousScrapeAt: new Date(1_000).toISOString(), at: 2_000, statusCode: 200, diff: "@@ -1 +1 @@\n-two\n+three\n",
    }]);
    expect(validator("crawl-change")(changes(second)[0])).toBe(true);

    // a replay of c2's pages after they were stored (the records may have been lost in a crash): the same records
    t = 3_000;
    const replay = await run(msg("c2", "a", "one\n"), { ...msg("c2", "b", "three\n"), value: { ...msg("c2", "b", "three\n").value, kind: "batch" } });
    // (each page's event again too, under the seq it was stored at: sink.test.ts)
    expect(replay.map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox", "crawl.events", "crawl.changes", "frontier.inbox"]);
    expect(changes(replay)).toEqual(changes(second));
    expect(await memory.changeCounts("t", "", "c2")).toEqual({ new: 0, same: 1, changed: 1, removed: 0 });
    await memory.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
