import { describe, expect, it } from "vitest";
import type { CrawlEvent, CrawlPage } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import { InfrastructureError } from "../runtime/errors.ts";
import { createLogger } from "../runtime/logger.ts";
import { CancelCache } from "../store/cancel-cache.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { CURSOR_IDLE_MS, SinkProcessor } from "./sink.ts";
import { runSinkBatch } from "./run-batch.testing.ts";
import { ApiEventsProcessor, EventHub } from "../../api/event-hub.ts";
import { WebhookEmitter } from "../webhook-emit/emitter.ts";

const page = (crawlId: string, urlKey: string): Consumed<CrawlPage> => ({
  topic: "crawl.pages", partition: 0, offset: "0", key: crawlId,
  value: { crawlId, urlKey, credits: 1, document: { markdown: "x", metadata: { url: `https://s.test/${urlKey}`, sourceURL: `https://s.test/${urlKey}`, scrapeId: urlKey, statusCode: 200 } } },
});

/** Crawl records (running unless `status` says otherwise): a replay announces a stored page again only while its crawl runs. */
const crawls = (store: EmbeddedCrawlStore, ids: string[], status: CrawlRecord["status"] = "scraping") => store.saveCrawls(ids.map((crawlId, i) => ({
  crawlId, version: status === "scraping" ? 1 : 2, teamId: "t", url: "https://s.test/", webhook: "", status, total: 1, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0,
  discoveryDone: true, createdAt: 1, updatedAt: 1 + i, completedAt: 0, expiresAt: 1e15, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
})));

describe("sink cursors", () => {
  it("drops a crawl's cursor once idle, and still stores each page once after that", async () => {
    let t = 1_000_000;
    const clock = { now: () => t };
    const store = await EmbeddedCrawlStore.open(null, t);
    await crawls(store, ["a", "b"]);
    const sink = new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log: createLogger("silent") });
    const run = (msg: Consumed<CrawlPage>) => runSinkBatch(sink, [msg]);
    expect((await run(page("a", "p1"))).map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox"]);
    expect(sink.cachedCrawls()).toEqual(["a"]);
    t += CURSOR_IDLE_MS + 60_001;
    await run(page("b", "p1"));
    expect(sink.cachedCrawls()).toEqual(["b"]);
    // a replay of a's page after the eviction: recognised from the store, announced again (its event under the seq it
    // was stored at) and as done, not stored again
    const replay = await run(page("a", "p1"));
    expect(replay.map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox"]);
    expect((replay[0]?.value as CrawlEvent).seq).toBe(0);
    expect((await run(page("a", "p2"))).map((e) => e.topic)).toEqual(["crawl.events", "frontier.inbox"]);
    expect((await store.pageDocuments("a", 0, 1e9, 100)).docs).toHaveLength(2);
  });

  it("a crash between the insert and the produce: the replay announces the page event again, under the seq it was stored at", async () => {
    const clock = { now: () => 2_000_000 };
    const store = await EmbeddedCrawlStore.open(null, clock.now());
    await crawls(store, ["c"]);
    const sinkOf = () => new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log: createLogger("silent") });
    const run = runSinkBatch;
    // the first process stores p1 and p2 (seq 0, 1), then dies before its emissions are produced: nothing announced
    const lost = await run(sinkOf(), [page("c", "p1"), page("c", "p2")]);
    const seqOf = (out: typeof lost, key: string) => out.filter((e) => e.topic === "crawl.events").map((e) => e.value as CrawlEvent)
      .filter((e) => e.document?.metadata.scrapeId === key).map((e) => e.seq);
    expect([seqOf(lost, "p1"), seqOf(lost, "p2")]).toEqual([[0], [1]]);
    // the replay, in another process: each page's event again with its seq (webhook-emit's event id crawl.page:<seq>)
    const replayed = await run(sinkOf(), [page("c", "p2"), page("c", "p1")]);
    expect([seqOf(replayed, "p1"), seqOf(replayed, "p2")]).toEqual([[0], [1]]);
    expect(replayed.filter((e) => e.topic === "frontier.inbox")).toHaveLength(2);
    expect((await store.pageDocuments("c", 0, 1e9, 100)).docs).toHaveLength(2);
    // a second fetch of p1 with other content (a reissue): the event announces the document as stored, not the new one
    const refetch = { ...page("c", "p1"), value: { ...page("c", "p1").value, document: { markdown: "other", metadata: { url: "https://s.test/p1", sourceURL: "https://s.test/p1", scrapeId: "second", statusCode: 200 } } } };
    const again = (await run(sinkOf(), [refetch])).filter((e) => e.topic === "crawl.events").map((e) => e.value as CrawlEvent);
    expect(again.map((e) => [e.seq, e.document?.markdown, e.document?.metadata.scrapeId])).toEqual([[0, "x", "p1"]]);
    // once the crawl has ended its events are all out (it ends only after every PageDone): nothing follows crawl.completed
    await crawls(store, ["c"], "completed");
    expect((await run(sinkOf(), [page("c", "p1")])).map((e) => e.topic)).toEqual(["frontier.inbox"]);
  });

  it("sends the page event as JSON text that embeds the stored document's text and parses to the event", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    const sink = new SinkProcessor({ store, cancels: new CancelCache(store, 0, () => 1), clock: { now: () => 7 }, log: createLogger("silent") });
    const msg = page("c", "p1");
    msg.value = { ...msg.value, teamId: "team-1", kind: "batch", document: { ...msg.value.document, markdown: "quote \" and \\ and \u2028 ünï" } };
    const batch = sink.createBatch();
    await sink.prepare([msg], batch);
    const [event] = await sink.handle(msg, batch);
    await sink.beforeProduce(batch);
    expect(event?.topic).toBe("crawl.events");
    expect(JSON.parse(event?.json ?? "")).toEqual(event?.value);
    expect(event?.value).toMatchObject({ crawlId: "c", teamId: "team-1", type: "crawl.page", at: 7, seq: 0, kind: "batch", document: msg.value.document });
    const stored = (await store.pageDocuments("c", 0, 1e9, 1)).docs[0];
    expect(stored).toBeDefined();
    expect(event?.json).toContain(`"document":${stored}`);
    // the API's event feed recognises this layout before decoding (a crawl nobody watches: skipped)
    expect(new ApiEventsProcessor(new EventHub()).skip(null, event?.json ?? null)).toBe(true);
    // and so does webhook-emit, for a crawl it knows has no webhook (its key is the crawl id)
    const emitter = new WebhookEmitter({ store, clock: { now: () => 7 }, log: createLogger("silent"), secret: "s" });
    await emitter.handle({ topic: "crawl.events", partition: 0, offset: "0", key: event?.key ?? "", value: event?.value as CrawlEvent }, emitter.createBatch());
    expect(event?.key).toBe("c");
    expect(emitter.skip(event?.key ?? null, event?.json ?? null)).toBe(true);
  });
});

// The sink's per-crawl cursor (next seq, stored keys) follows the partition: when a crawl's partition moves to
// another sink and back, the first sink reads the cursor again instead of writing with a stale one.
const pageN = (n: number): CrawlPage => ({
  crawlId: "c1",
  urlKey: `example.com/p${n}`,
  credits: 1,
  document: { markdown: `page ${n}`, metadata: { sourceURL: `https://example.com/p${n}`, url: `https://example.com/p${n}`, statusCode: 200, scrapeId: `s${n}` } },
});

describe("sink across rebalances", () => {
  it("a crawl's partition that moves away and back is not written with a stale cursor (no duplicate key or seq)", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    // every row the sinks write, as a store without read-time dedup (ClickHouse's MergeTree) would keep them
    const written: { urlKey: string; seq: number }[] = [];
    const insert = store.insertDocuments.bind(store);
    store.insertDocuments = async (rows) => {
      written.push(...rows.map((r) => ({ urlKey: r.urlKey, seq: r.seq })));
      await insert(rows);
    };
    const log = createLogger("silent");
    const clock = { now: () => 1 };
    const sink = () => new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log });
    const [a, b] = [sink(), sink()];
    const store1 = async (s: SinkProcessor, n: number) => {
      const batch = s.createBatch();
      await s.prepare([], batch);
      await s.handle({ topic: "crawl.pages", partition: 0, offset: String(n), key: "c1", value: pageN(n) }, batch);
      await s.beforeProduce(batch);
    };
    a.onPartitionsAssigned([0]);
    await store1(a, 1);
    // rebalance: partition 0 moves to b, which stores page 2
    a.onPartitionsAssigned([1]);
    b.onPartitionsAssigned([0]);
    await store1(b, 2);
    // and back to a: page 2 is redelivered (b died before its commit), then page 3
    b.onPartitionsAssigned([1]);
    a.onPartitionsAssigned([0]);
    await store1(a, 2);
    await store1(a, 3);
    expect(written).toEqual([
      { urlKey: "example.com/p1", seq: 0 },
      { urlKey: "example.com/p2", seq: 1 },
      { urlKey: "example.com/p3", seq: 2 },
    ]);
  });

  it("an insert that failed after it was stored (the server went away before answering) is not written again on the retry", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    const written: string[] = [];
    const insert = store.insertDocuments.bind(store);
    let lost = 1;
    store.insertDocuments = async (rows) => {
      written.push(...rows.map((r) => r.urlKey));
      await insert(rows);
      if (lost-- > 0) throw new InfrastructureError("STORE_UNAVAILABLE", "clickhouse insert failed: socket hang up");
    };
    const clock = { now: () => 1 };
    const s = new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log: createLogger("silent") });
    const batch = s.createBatch();
    await s.prepare([], batch);
    for (const n of [1, 2]) await s.handle({ topic: "crawl.pages", partition: 0, offset: String(n), key: "c1", value: pageN(n) }, batch);
    // the runner's retry of the batch's side effects
    await expect(s.beforeProduce(batch)).rejects.toThrow("socket hang up");
    await s.beforeProduce(batch);
    expect(written).toEqual(["example.com/p1", "example.com/p2"]);
  });
});
