import { describe, expect, it } from "vitest";
import type { CrawlOptions, FetchTask, FrontierInboxMessage } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { URL_STATE, type UrlRow } from "../store/crawl-store.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { FrontierProcessor } from "./frontier.ts";
import { keyOf, restore, resume, toRecord, type CrawlState } from "./reducer.ts";
import { CONFIRMING_KEYS, InboxOwnership, kafkaPartitionOf, reissueAfterMs, reissueCheckMs, reissueDue, reissueWaitMs, type StageLimits } from "./reissue.ts";
import { reduceAdmitted } from "../../test/fixtures/admitted-reduce.ts";

// the config table's defaults
const DEFAULTS: StageLimits = { fetchTimeoutMs: 30_000, fetchRetries: 2, retryAfterMaxMs: 30_000, hostDelayMs: 0, convertTimeoutMs: 30_000, llmTimeoutMs: 60_000, llmRetries: 3 };
// small limits, as the integration test sets them: 2 s + 2 s + 3 s + 5 s
const SMALL: StageLimits = { ...DEFAULTS, fetchTimeoutMs: 2000, fetchRetries: 0, retryAfterMaxMs: 0, convertTimeoutMs: 3000 };
const options: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const ID = "c1";
const START = "https://s.test/docs/";
const k = (url: string) => keyOf(url, options);
const requested: FrontierInboxMessage = { type: "CrawlRequested", crawlId: ID, url: START, options, createdAt: 1 };
const links = (from: string, ...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: k(from), url: from, depth: 0, links: hrefs });
const done = (url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: k(url), credits: 1 });

/** Applies events at the given times; returns the state and the page fetch tasks sent. */
function run(events: [number, FrontierInboxMessage][], from: CrawlState | null = null) {
  let state = from;
  const tasks: string[] = [];
  const rows: UrlRow[] = [];
  for (const [t, e] of events) {
    const r = reduceAdmitted(state, e, t);
    state = r.state;
    rows.push(...r.step.urlRows);
    for (const em of r.step.emissions) if (em.topic === "fetch.tasks") tasks.push((em.value as FetchTask).url);
  }
  return { state: state as CrawlState, tasks, rows };
}

const queuedRows = (state: CrawlState, rows: UrlRow[]) => rows.filter((r) => r.state === URL_STATE.queued && r.url && state.urls.get(r.urlKey) !== undefined);

describe("reissue bound", () => {
  it("is the sum of every stage's time limit for one page, from the config and the crawl's options", () => {
    // (2 + 1) × 30 s fetch + 2 × 30 s Retry-After + 30 s render + 30 s convert + 5 s
    expect(reissueAfterMs(DEFAULTS, options)).toBe(215_000);
    // json: + (3 + 1) × 60 s of extraction
    expect(reissueAfterMs(DEFAULTS, { ...options, formats: ["json"] })).toBe(455_000);
    // the crawl's own timeout replaces FETCH_TIMEOUT_MS; its delay and waitFor add
    expect(reissueAfterMs(DEFAULTS, { ...options, timeoutMs: 10_000, delayMs: 4000, waitForMs: 2000 })).toBe(3 * 10_000 + 2 * 30_000 + 4000 + 12_000 + 30_000 + 5000);
    // a short Retry-After still counts the fetch's own backoff (8 s)
    expect(reissueAfterMs({ ...DEFAULTS, retryAfterMaxMs: 0 }, options)).toBe(90_000 + 16_000 + 30_000 + 30_000 + 5000);
    expect(reissueAfterMs(SMALL, options)).toBe(12_000);
    expect(reissueCheckMs(SMALL)).toBe(3000);
    expect(reissueCheckMs(DEFAULTS)).toBe(10_000);
  });

  it("doubles while a crawl stays stalled, up to 8 times", () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => reissueWaitMs(1000, n))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });
});

describe("reissue of a stalled crawl", () => {
  const bound = reissueAfterMs(SMALL, options);

  it("is due once no event changed the crawl for the bound, not before", () => {
    const { state } = run([[1000, requested], [2000, links(START, `${START}a`, `${START}b`)], [3000, done(START)]]);
    expect(state.progressAt).toBe(3000);
    expect(reissueDue(state, 3000 + bound - 1, SMALL)).toBe(false);
    expect(reissueDue(state, 3000 + bound, SMALL)).toBe(true);
  });

  it("is not restarted by events that change nothing (a duplicate PageDone, known links)", () => {
    const { state } = run([[1000, requested], [2000, links(START, `${START}a`)], [3000, done(START)], [9000, done(START)], [9500, links(START, `${START}a`)]]);
    expect(state.progressAt).toBe(3000);
    expect(reissueDue(state, 3000 + bound, SMALL)).toBe(true);
  });

  it("sends every queued URL again, then waits twice as long; progress resets the wait", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`, `${START}b`)], [3000, done(START)]]);
    const { state } = first;
    const t1 = 3000 + bound;
    const step = resume(state, queuedRows(state, first.rows), t1);
    expect(step.emissions.map((e) => (e.value as FetchTask).url).sort()).toEqual([`${START}a`, `${START}b`]);
    expect(state.reissues).toBe(1);
    expect(reissueDue(state, t1 + bound, SMALL)).toBe(false);
    expect(reissueDue(state, t1 + 2 * bound, SMALL)).toBe(true);
    run([[t1 + 100, done(`${START}a`)]], state);
    expect(state.reissues).toBe(0);
    expect(reissueDue(state, t1 + 100 + bound - 1, SMALL)).toBe(false);
  });

  it("counts a page once when the late original and the reissue both come back: credits exact", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`)], [3000, done(START)]]);
    const { state } = first;
    resume(state, queuedRows(state, first.rows), 3000 + bound);
    const events: string[] = [];
    for (const [t, e] of [[20_000, done(`${START}a`)], [20_500, done(`${START}a`)]] as [number, FrontierInboxMessage][]) {
      const r = reduceAdmitted(state, e, t);
      for (const em of r.step.emissions) if (em.topic === "crawl.events") events.push((em.value as { type: string }).type);
    }
    expect(state.status).toBe("completed");
    expect(state.done).toBe(2);
    expect(state.creditsUsed).toBe(2);
    // the second PageDone announces the end again, as any replay of the message that ended a crawl does (webhook-emit
    // hands an event type once, by event id)
    expect(events).toEqual(["crawl.completed", "crawl.completed"]);
    expect(reissueDue(state, 10_000_000, SMALL)).toBe(false);
  });

  it("a restored crawl counts its stall from its record's last write", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`)]]);
    const restored = restore(toRecord(first.state, 2500), first.rows);
    expect(restored.progressAt).toBe(2500);
    expect(restored.reissues).toBe(0);
    expect(reissueDue(restored, 2500 + bound, SMALL)).toBe(true);
  });

  it("is never due for a crawl that ended", () => {
    const { state } = run([[1000, requested], [2000, done(START)]]);
    expect(state.status).toBe("completed");
    expect(reissueDue(state, 1e12, SMALL)).toBe(false);
  });
});

/** `n` crawl ids whose frontier.inbox partition (of `partitions`) is one of `among`. */
function idsIn(among: number[], partitions: number, n: number, prefix: string): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < n; i++) if (among.includes(kafkaPartitionOf(`${prefix}${i}`, partitions))) ids.push(`${prefix}${i}`);
  return ids;
}

describe("the orphan scan's crawls: those of this process's frontier.inbox partitions", () => {
  it("a crawl's partition is the Kafka producer's: murmur2 of its id (the Java client's test vectors), positive, modulo the count", () => {
    const vectors: [string, number][] = [["21", -973932308], ["foobar", -790332482], ["a-little-bit-long-string", -985981536], ["abc", 479470107]];
    for (const [key, hash] of vectors) for (const n of [1, 4, 7, 12]) expect(kafkaPartitionOf(key, n), `${key} of ${n}`).toBe((hash & 0x7fffffff) % n);
  });

  it("every crawl in embedded mode (no partition assigned ever), and on Kafka until KAFKA_PARTITIONS is confirmed", () => {
    const embedded = new InboxOwnership(4);
    expect(embedded.seen("x", 3)).toBe(false);
    expect(["a", "b", "c", "d", "e"].every((id) => embedded.owns(id))).toBe(true);

    const kafka = new InboxOwnership(4);
    kafka.assign([0, 1]);
    const elsewhere = idsIn([2, 3], 4, 5, "o");
    expect(elsewhere.every((id) => kafka.owns(id))).toBe(true);
    // messages arrive where the producer's partitioner (java-partitioner.ts) put them: the count is confirmed, another replica's crawls are left out
    const keys = idsIn([0, 1], 4, CONFIRMING_KEYS, "k");
    for (const key of keys) expect(kafka.seen(key, kafkaPartitionOf(key, 4))).toBe(false);
    expect(keys.every((id) => kafka.owns(id))).toBe(true);
    expect(elsewhere.some((id) => kafka.owns(id))).toBe(false);
    // after a rebalance, the new assignment
    kafka.assign([2, 3]);
    expect(elsewhere.every((id) => kafka.owns(id))).toBe(true);
    expect(keys.some((id) => kafka.owns(id))).toBe(false);
  });

  it("every crawl again once a message shows the topic has another partition count", () => {
    const ownership = new InboxOwnership(4);
    ownership.assign([0]);
    const keys = idsIn([0], 4, CONFIRMING_KEYS, "k");
    for (const key of keys) ownership.seen(key, 0);
    const other = idsIn([1, 2, 3], 4, 3, "o");
    expect(other.some((id) => ownership.owns(id))).toBe(false);
    // the topic has 2 partitions, not KAFKA_PARTITIONS' 4: a key of partition 1 of 2 that 4 would put in 3
    const [odd] = idsIn([3], 4, 200, "w").filter((k) => kafkaPartitionOf(k, 2) === 1);
    expect(ownership.seen(odd as string, 1)).toBe(true);
    expect(ownership.seen(odd as string, 1)).toBe(false);
    expect(other.every((id) => ownership.owns(id))).toBe(true);
  });

  it("two frontier replicas: each asks for the forgotten crawls of its own partitions only, each crawl once", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    let t = 1_000;
    const clock = { now: () => t };
    const limits = { ...SMALL, topicPartitions: 4 };
    const frontier = () => new FrontierProcessor({ store, clock, log: createLogger("silent"), limits });
    const msg = (value: FrontierInboxMessage, partition: number): Consumed<FrontierInboxMessage> => ({ topic: "frontier.inbox", partition, offset: "0", key: value.crawlId, value });
    // a process that since stopped started six crawls: their records say scraping
    const crawls = [...idsIn([0, 1], 4, 3, "crawl-a"), ...idsIn([2, 3], 4, 3, "crawl-b")];
    const gone = frontier();
    const batch = gone.createBatch();
    for (const id of crawls) await gone.handle(msg({ type: "CrawlRequested", crawlId: id, url: START, options, createdAt: t }, kafkaPartitionOf(id, 4)), batch);
    await gone.afterPhase(batch, 0);
    expect((await store.runningCrawlIds()).sort()).toEqual([...crawls].sort());

    // two new replicas share the partitions; messages of other crawls have come to each (unknown crawls: ignored)
    const replicas = [[0, 1], [2, 3]].map((partitions, i) => {
      const f = frontier();
      f.onPartitionsAssigned(partitions);
      return { f, partitions, seen: idsIn(partitions, 4, CONFIRMING_KEYS, `other-${i}-`) };
    });
    for (const { f, seen } of replicas) {
      const b = f.createBatch();
      for (const key of seen) await f.handle(msg({ type: "PageDone", crawlId: key, urlKey: "k", credits: 1 }, kafkaPartitionOf(key, 4)), b);
    }
    t += 2 * reissueAfterMs(SMALL, options);
    const asked = await Promise.all(replicas.map(({ f }) => f.orphansForReissue(t)));
    for (const [i, { partitions }] of replicas.entries()) {
      expect(asked[i]?.sort()).toEqual(crawls.filter((id) => partitions.includes(kafkaPartitionOf(id, 4))).sort());
    }
    expect(asked.flat().sort()).toEqual([...crawls].sort());
  });
});
