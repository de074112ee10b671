import { describe, expect, it } from "vitest";
import type { CrawlPage } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { CancelCache } from "../store/cancel-cache.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { CURSOR_IDLE_MS, SinkProcessor } from "./sink.ts";

const page = (crawlId: string, urlKey: string): Consumed<CrawlPage> => ({
  topic: "crawl.pages", partition: 0, offset: "0", key: crawlId,
  value: { crawlId, urlKey, credits: 1, document: { markdown: "x", metadata: { url: `https://s.test/${urlKey}`, sourceURL: `https://s.test/${urlKey}`, scrapeId: urlKey, statusCode: 200 } } },
});

describe("sink cursors", () => {
  it("drops a crawl's cursor once idle, and still stores each page once after that", async () => {
    let t = 1_000_000;
    const clock = { now: () => t };
    const store = await EmbeddedCrawlStore.open(null, t);
    const sink = new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log: createLogger("silent") });
    const run = async (msg: Consumed<CrawlPage>) => {
      const batch = sink.createBatch();
      await sink.prepare([msg], batch);
      const out = await sink.handle(msg, batch);
      await sink.beforeProduce(batch);
      return out;
    };
    expect((await run(page("a", "p1"))).map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox"]);
    expect(sink.cachedCrawls()).toEqual(["a"]);
    t += CURSOR_IDLE_MS + 60_001;
    await run(page("b", "p1"));
    expect(sink.cachedCrawls()).toEqual(["b"]);
    // a replay of a's page after the eviction: recognised from the store, announced as done, not stored again
    expect((await run(page("a", "p1"))).map((e) => e.topic)).toEqual(["frontier.inbox"]);
    expect((await run(page("a", "p2"))).map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox"]);
    expect((await store.pageDocuments("a", 0, 1e9, 100)).docs).toHaveLength(2);
  });
});
