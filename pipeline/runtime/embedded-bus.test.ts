// The in-process bus keeps the semantics the processors rely on: per-key order, redelivery of what was not
// committed, and (with a directory) logs and offsets that survive a restart.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { getEventListeners } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Consumed, Emission, Processor } from "./bus.ts";
import { unframe } from "./append-log.ts";
import { busRecord, EmbeddedBus, parseBusRecord, partitionOf } from "./embedded-bus.ts";
import { nextWake } from "./next-wake.ts";
import { createLogger } from "./logger.ts";
import { errorCode, errorMessage, InfrastructureError } from "./errors.ts";

const log = createLogger("silent");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Msg = { type: "CancelRequested"; crawlId: string };

/** A processor over frontier.inbox that records what it saw and can be told to fail. */
function recorder(opts: { failTimes?: number; emit?: (m: Msg) => Emission[] } = {}) {
  const seen: string[] = [];
  let failures = opts.failTimes ?? 0;
  const p: Processor<Msg, void> = {
    name: "rec",
    topic: "frontier.inbox",
    schema: "frontier-inbox",
    group: "rec",
    broadcast: false,
    mode: "ordered",
    concurrency: 1,
    createBatch() {},
    async handle(m: Consumed<Msg>) {
      if (failures > 0) {
        failures--;
        throw new InfrastructureError("STORE_UNAVAILABLE", "store down");
      }
      seen.push(m.value.crawlId);
      return opts.emit?.(m.value) ?? [];
    },
  };
  return { p, seen };
}

const cancel = (id: string, key = id): Emission => ({ topic: "frontier.inbox", key, value: { type: "CancelRequested", crawlId: id } });

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("EmbeddedBus", () => {
  it("hashes a key to one partition", () => {
    expect(partitionOf("crawl-1", 12)).toBe(partitionOf("crawl-1", 12));
    const spread = new Set(Array.from({ length: 200 }, (_, i) => partitionOf(`k${i}`, 12)));
    expect(spread.size).toBe(12);
  });

  it("delivers every message of a key in produce order", async () => {
    const bus = await EmbeddedBus.open({ partitions: 4, dir: null, log });
    const { p, seen } = recorder();
    const run = bus.consume(p, log);
    const ids = Array.from({ length: 300 }, (_, i) => `a-${i}`);
    // one key, so one partition and one order; interleaved with other keys
    for (const id of ids) await bus.produce([cancel(id, "same-key"), cancel(`other-${id}`, `k-${id}`)]);
    await until(() => seen.length === 600);
    expect(seen.filter((s) => s.startsWith("a-"))).toEqual(ids);
    await run.stop();
  });

  it("redelivers a message whose handling failed (retried, not lost)", async () => {
    const bus = await EmbeddedBus.open({ partitions: 2, dir: null, log });
    const { p, seen } = recorder({ failTimes: 2 });
    const run = bus.consume(p, log);
    await bus.produce([cancel("x")]);
    await until(() => seen.length === 1);
    expect(seen).toEqual(["x"]);
    await run.stop();
  });

  it("routes emissions of a consumer to other topics and dead letters to the .dlq twin", async () => {
    const bus = await EmbeddedBus.open({ partitions: 2, dir: null, log });
    const { p } = recorder({ emit: (m) => [{ topic: "crawl.events", key: m.crawlId, value: { crawlId: m.crawlId, type: "crawl.cancelled", at: 1 } }] });
    const events: string[] = [];
    const sink: Processor<{ crawlId: string }, void> = {
      name: "events", topic: "crawl.events", schema: "crawl-event", group: "events", broadcast: false, mode: "parallel", concurrency: 4, createBatch() {},
      async handle(m) {
        events.push(m.value.crawlId);
        return [];
      },
    };
    const r1 = bus.consume(p, log);
    const r2 = bus.consume(sink, log);
    await bus.produce([cancel("e1"), { topic: "frontier.inbox", key: "bad", value: { type: "Nonsense" } }]);
    await until(() => events.length === 1);
    expect(events).toEqual(["e1"]);
    await r1.stop();
    await r2.stop();
  });

  it("resumes from committed offsets after a restart, and redelivers what was not committed", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-bus-"));
    dirs.push(dir);
    const bus1 = await EmbeddedBus.open({ partitions: 3, dir, log });
    const a = recorder();
    const run1 = bus1.consume(a.p, log);
    await bus1.produce(["1", "2", "3"].map((id) => cancel(id)));
    await until(() => a.seen.length === 3);
    await run1.stop();
    // produced while no consumer runs, then the process "restarts"
    await bus1.produce(["4", "5"].map((id) => cancel(id)));
    await bus1.close();

    const bus2 = await EmbeddedBus.open({ partitions: 3, dir, log });
    const failing = recorder({ failTimes: 1_000_000 });
    const run2 = bus2.consume(failing.p, log);
    await new Promise((r) => setTimeout(r, 100));
    await run2.stop(); // stopped while the store was down: nothing committed
    await bus2.close();

    const bus3 = await EmbeddedBus.open({ partitions: 3, dir, log });
    const c = recorder();
    const run3 = bus3.consume(c.p, log);
    await until(() => c.seen.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(c.seen.sort()).toEqual(["4", "5"]);
    await run3.stop();
    await bus3.close();
  });

  it("after a torn write: drops the torn record, reads offsets from the records, and loses nothing appended later", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-bus-"));
    dirs.push(dir);
    const bus1 = await EmbeddedBus.open({ partitions: 1, dir, log });
    await bus1.produce(["1", "2", "3"].map((id) => cancel(id)));
    await bus1.close();
    const file = join(dir, "bus", "frontier.inbox", "0.log");
    // a crash in the middle of appending record 4: half of it on disk, no newline
    const torn = JSON.stringify({ o: 3, k: "4", v: JSON.stringify({ type: "CancelRequested", crawlId: "4" }) });
    appendFileSync(file, torn.slice(0, 20));

    const bus2 = await EmbeddedBus.open({ partitions: 1, dir, log });
    expect(bus2.damage.tornBytes).toBe(20);
    await bus2.produce(["5", "6"].map((id) => cancel(id)));
    await bus2.close();
    // every line whole; offsets 0..4 in order (5 took the torn record's offset: it was never visible)
    const lines = readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(unframe(l) as string) as { o: number; k: string });
    expect(lines.map((l) => [l.o, l.k])).toEqual([[0, "1"], [1, "2"], [2, "3"], [3, "5"], [4, "6"]]);

    const bus3 = await EmbeddedBus.open({ partitions: 1, dir, log });
    expect(bus3.damage).toEqual({ tornBytes: 0, missingOffsets: 0, damagedRecords: 0 });
    const c = recorder();
    const run = bus3.consume(c.p, log);
    await until(() => c.seen.length === 5);
    expect(c.seen).toEqual(["1", "2", "3", "5", "6"]);
    await run.stop();
    await bus3.close();
  });

  it("messages holding U+2028, U+2029, CR or lone surrogates survive a clean stop whole (never read as damaged)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-bus-"));
    dirs.push(dir);
    // a line splitter cut each of these records in two: the bus skipped both halves as damaged after a clean stop
    const ids = ["a\u2028b", "\u2029", "c\rd", "lone \ud800", "\u2028".repeat(50_000)];
    const bus1 = await EmbeddedBus.open({ partitions: 1, dir, log });
    await bus1.produce(ids.map((id) => cancel(id)));
    await bus1.close();
    const bus2 = await EmbeddedBus.open({ partitions: 1, dir, log });
    expect(bus2.damage).toEqual({ tornBytes: 0, missingOffsets: 0, damagedRecords: 0 });
    const c = recorder();
    const run = bus2.consume(c.p, log);
    await until(() => c.seen.length === ids.length);
    expect(c.seen).toEqual(ids);
    await run.stop();
    await bus2.close();
  });

  it("a record lost in the middle of an old log leaves a gap, not a shift of every later offset", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-bus-"));
    dirs.push(dir);
    const file = join(dir, "bus", "frontier.inbox", "0.log");
    mkdirSync(join(dir, "bus", "frontier.inbox"), { recursive: true });
    const rec = (o: number, id: string) => JSON.stringify({ o, k: id, v: JSON.stringify({ type: "CancelRequested", crawlId: id }) });
    // record 1 was glued onto a torn one by an older version: unreadable
    writeFileSync(file, [rec(0, "a"), `{"o":1,"k":"x","v${rec(1, "b")}`, rec(2, "c")].join("\n") + "\n");
    writeFileSync(join(dir, "bus", "offsets.json"), JSON.stringify({ rec: { "frontier.inbox": [1] } }));
    const bus = await EmbeddedBus.open({ partitions: 1, dir, log });
    expect(bus.damage.missingOffsets).toBe(1);
    const c = recorder();
    const run = bus.consume(c.p, log);
    await until(() => c.seen.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    // committed up to offset 1: "c" (offset 2) is delivered, "a" is not delivered again
    expect(c.seen).toEqual(["c"]);
    await run.stop();
    await bus.close();
  });
});

describe("an idle consumer's wait", () => {
  it("leaves no abort listener behind once woken, and ends when the consumer stops", async () => {
    const stopping = new AbortController();
    const waiters: (() => void)[] = [];
    for (let i = 0; i < 1000; i++) {
      const woken = nextWake(waiters, stopping.signal);
      for (const wake of waiters.splice(0)) wake();
      await woken;
    }
    expect(getEventListeners(stopping.signal, "abort")).toHaveLength(0);
    const pending = nextWake(waiters, stopping.signal);
    expect(getEventListeners(stopping.signal, "abort")).toHaveLength(1);
    stopping.abort();
    await pending;
    await nextWake(waiters, stopping.signal); // already stopped: at once
  });
});

describe("a topic bounded in memory", () => {
  it("holds its producer until consumers bring it under the bound, loses nothing, and releases producers when its consumer stops", async () => {
    const bus = await EmbeddedBus.open({ partitions: 2, dir: null, log, topicMemoryChars: 2000, boundedTopics: new Set(["frontier.inbox"]) });
    let open = false;
    const seen: string[] = [];
    const { p } = recorder();
    const gated: Processor<Msg, void> = {
      ...p,
      async handle(m) {
        await until(() => open);
        seen.push(m.value.crawlId);
        return [];
      },
    };
    const run = bus.consume(gated, log);
    // each message holds ~50 characters: 100 of them pass the bound, and the consumer takes none while closed
    let produced = 0;
    const producing = (async () => {
      for (let i = 0; i < 100; i++) {
        await bus.produce([cancel(`m-${i}`)]);
        produced++;
      }
    })();
    await until(() => bus.heldChars("frontier.inbox") >= 2000);
    await new Promise((r) => setTimeout(r, 50));
    expect(produced).toBeLessThan(100); // held at the bound
    expect(bus.heldChars("frontier.inbox")).toBeLessThan(2000 + 100);
    open = true;
    await producing;
    await until(() => seen.length === 100);
    expect(new Set(seen).size).toBe(100);

    // a consumer that stops lets its producers through (shutdown never waits on the bound)
    open = false;
    const more = (async () => {
      for (let i = 0; i < 100; i++) await bus.produce([cancel(`n-${i}`)]);
    })();
    await until(() => bus.heldChars("frontier.inbox") >= 2000);
    open = true;
    await run.stop();
    await more;

    // a consumer of the topic again: its producers are held at the bound again
    open = false;
    const again = bus.consume(gated, log);
    let producedAgain = 0;
    const third = (async () => {
      for (let i = 0; i < 100; i++) {
        await bus.produce([cancel(`o-${i}`)]);
        producedAgain++;
      }
    })();
    await new Promise((r) => setTimeout(r, 50));
    expect(producedAgain).toBe(0); // what the stopped consumer left already fills the topic
    open = true;
    await third;
    await until(() => bus.heldChars("frontier.inbox") === 0);
    await again.stop();
  });
});

describe("bus records", () => {
  it("hold the value's JSON as it is and read back exactly, whatever the key and value contain; format 2 records still read", () => {
    const keys = ["plain", 'qu"ote', ',"j":{}', "tab\tnew\nline", "é✓𝄞", ""];
    const values = [{ type: "x", html: '<a href="y">,"j":{"o":1}</a>\n\t\\' }, { n: 1, nested: { k: ',"k":"z"' } }, "just a string", 42, null];
    for (const [o, key] of keys.entries()) {
      for (const value of values) {
        const json = JSON.stringify(value);
        const line = busRecord(o, key, json);
        expect(JSON.parse(line)).toEqual({ o, k: key, j: value }); // still one valid JSON object
        expect(parseBusRecord(line)).toEqual({ o, k: key, v: json });
        expect(parseBusRecord(JSON.stringify({ o, k: key, v: json }))).toEqual({ o, k: key, v: json });
      }
    }
    expect(() => parseBusRecord('{"o":1,"k":"x","v{"o":1')).toThrow();
  });
});

describe("a message that fails its schema", () => {
  it("goes to the dead-letter topic and, when it names its page, fails that page for its crawl (the crawl does not wait forever)", async () => {
    const bus = await EmbeddedBus.open({ partitions: 1, dir: null, log });
    const failed: string[] = [];
    const handled: string[] = [];
    const p: Processor<{ crawlId: string; urlKey: string; url: string }, void> = {
      name: "fetch", topic: "fetch.tasks", schema: "fetch-task", group: "fetch-test", broadcast: false, mode: "parallel", concurrency: 1,
      createBatch() {},
      async handle(m) {
        handled.push(m.value.urlKey);
        return [];
      },
      onPageFailure(m, err) {
        failed.push(`${m.value.urlKey} ${errorCode(err)}`);
        return [{ topic: "frontier.inbox", key: m.value.crawlId, value: { type: "PageFailed", crawlId: m.value.crawlId, urlKey: m.value.urlKey, url: m.value.url, code: errorCode(err), error: errorMessage(err) } }];
      },
    };
    const inbox = recorder();
    const runInbox = bus.consume(inbox.p, log);
    const run = bus.consume(p, log);
    // valid JSON, wrong shape: names its page; another without a page; a third not JSON at all
    await bus.produce([
      { topic: "fetch.tasks", key: "c1", value: { crawlId: "c1", urlKey: "k1", url: "https://s.test/a", depth: "deep" } },
      { topic: "fetch.tasks", key: "c1", value: { nothing: true } },
    ]);
    await until(() => failed.length === 1 && inbox.seen.length === 1);
    expect(failed).toEqual(["k1 MESSAGE_INVALID"]);
    expect(inbox.seen).toEqual(["c1"]);
    expect(handled).toEqual([]);
    let lag = -1;
    await until(() => {
      void bus.queueStats().then((stats) => (lag = stats.find((q) => q.topic === "fetch.tasks")?.lag ?? -1));
      return lag === 0; // both messages done and committed, none handled
    });
    await run.stop();
    await runInbox.stop();
    await bus.close();
  });
});
