// The embedded bus with a data directory keeps only EMBEDDED_BUS_MEMORY_BYTES of values in memory: the records past
// it stay in their partition's log and consumers read them back, with every semantic the processors rely on.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { afterEach, describe, expect, it } from "vitest";
import type { Consumed, Emission, Processor } from "./bus.ts";
import { EmbeddedBus } from "./embedded-bus.ts";
import { createLogger } from "./logger.ts";
import { InfrastructureError } from "./errors.ts";

const log = createLogger("silent");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "trawl-bus-spill-"));
  dirs.push(d);
  return d;
};

type Msg = { type: "CancelRequested"; crawlId: string };

/** A processor over frontier.inbox that records what it saw; `gate` holds it, `failTimes` fails its first handlings. */
function recorder(group = "rec", opts: { failTimes?: number; gate?: () => boolean } = {}) {
  const seen: string[] = [];
  let failures = opts.failTimes ?? 0;
  const p: Processor<Msg, void> = {
    name: group, topic: "frontier.inbox", schema: "frontier-inbox", group, broadcast: false, mode: "ordered", concurrency: 1,
    createBatch() {},
    async handle(m: Consumed<Msg>) {
      while (opts.gate && !opts.gate()) await new Promise((r) => setTimeout(r, 5));
      if (failures > 0) {
        failures--;
        throw new InfrastructureError("STORE_UNAVAILABLE", "store down");
      }
      seen.push(m.value.crawlId);
      return [];
    },
  };
  return { p, seen };
}

const cancel = (id: string, key: string): Emission => ({ topic: "frontier.inbox", key, value: { type: "CancelRequested", crawlId: id } });
/** `n` messages over `keys` keys, produced in batches of 100; ids `${prefix}${key}-${i}`. */
async function produceMany(bus: EmbeddedBus, n: number, prefix = "m", keys = 7, pad = "") {
  for (let i = 0; i < n; i += 100) {
    await bus.produce(Array.from({ length: Math.min(100, n - i) }, (_, j) => cancel(`${prefix}${(i + j) % keys}-${i + j}${pad}`, `key-${(i + j) % keys}`)));
  }
}
/** The ids of each key in the order seen. */
const byKey = (seen: string[]) => {
  const out = new Map<string, number[]>();
  for (const s of seen) {
    const [k, i] = s.split("-") as [string, string];
    out.set(k, [...(out.get(k) ?? []), Number.parseInt(i, 10)]);
  }
  return out;
};
const inOrder = (seen: string[], n: number, prefix = "m", keys = 7) => {
  expect(seen).toHaveLength(n);
  for (const [k, list] of byKey(seen)) {
    expect(k.startsWith(prefix)).toBe(true);
    expect(list).toEqual([...list].sort((a, b) => a - b));
  }
  expect(byKey(seen).size).toBe(Math.min(keys, n));
};

async function until(cond: () => boolean, ms = 20_000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("an embedded bus over its memory budget", () => {
  it("keeps the budget, leaves the rest on disk, and delivers everything in per-key order", async () => {
    const bus = await EmbeddedBus.open({ partitions: 3, dir: tempDir(), log, memoryChars: 5_000 });
    let open = false;
    const c = recorder("rec", { gate: () => open });
    const run = bus.consume(c.p, log); // a topic nobody consumes in the process keeps nothing
    await produceMany(bus, 3_000);
    const before = bus.memoryStats();
    expect(before.usedChars).toBeLessThanOrEqual(5_000);
    expect(before.spilled).toBeGreaterThan(2_500);
    open = true;
    await until(() => c.seen.length === 3_000);
    inOrder(c.seen, 3_000);
    expect(bus.memoryStats().spilledRecords).toBeGreaterThanOrEqual(before.spilled);
    // produced while consuming: memory and disk mixed
    await produceMany(bus, 2_000, "n");
    await until(() => c.seen.length === 5_000);
    inOrder(c.seen.slice(3_000), 2_000, "n");
    await run.stop();
    expect(bus.memoryStats()).toMatchObject({ usedChars: 0, spilled: 0 });
    await bus.close();
  });

  it("two groups at different offsets each read every record", async () => {
    const bus = await EmbeddedBus.open({ partitions: 2, dir: tempDir(), log, memoryChars: 3_000 });
    let open = false;
    const fast = recorder("fast");
    const slow = recorder("slow", { gate: () => open });
    const r1 = bus.consume(fast.p, log);
    const r2 = bus.consume(slow.p, log);
    await produceMany(bus, 2_000);
    await until(() => fast.seen.length === 2_000);
    expect(slow.seen.length).toBe(0);
    expect(bus.memoryStats().spilled).toBeGreaterThan(1_500); // the slow group holds them, on disk
    open = true;
    await until(() => slow.seen.length === 2_000);
    inOrder(fast.seen, 2_000);
    inOrder(slow.seen, 2_000);
    await r1.stop();
    await r2.stop();
    await bus.close();
  });

  it("redelivers what was not committed: a failed batch, and after a stop with nothing committed", async () => {
    const dir = tempDir();
    const bus1 = await EmbeddedBus.open({ partitions: 2, dir, log, memoryChars: 2_000 });
    const failing = recorder("rec", { failTimes: 1_000_000 });
    const run1 = bus1.consume(failing.p, log);
    await produceMany(bus1, 1_000);
    expect(bus1.memoryStats().spilled).toBeGreaterThan(500);
    await new Promise((r) => setTimeout(r, 100));
    await run1.stop(); // nothing committed
    await bus1.close();

    const bus2 = await EmbeddedBus.open({ partitions: 2, dir, log, memoryChars: 2_000 });
    const flaky = recorder("rec", { failTimes: 3 });
    const run2 = bus2.consume(flaky.p, log);
    await until(() => flaky.seen.length === 1_000);
    inOrder(flaky.seen, 1_000);
    await run2.stop();
    await bus2.close();
  });

  it("after a restart mid-spill: resumes from committed offsets with the unread records left on disk", async () => {
    const dir = tempDir();
    const bus1 = await EmbeddedBus.open({ partitions: 2, dir, log, memoryChars: 2_000 });
    const a = recorder();
    const run1 = bus1.consume(a.p, log);
    await produceMany(bus1, 1_000, "a");
    await until(() => a.seen.length === 1_000);
    await run1.stop();
    await produceMany(bus1, 1_500, "b"); // nobody consumes: most stay on disk only
    expect(bus1.memoryStats().spilled).toBeGreaterThan(1_000);
    await bus1.close();

    const bus2 = await EmbeddedBus.open({ partitions: 2, dir, log, memoryChars: 2_000 });
    const stats = bus2.memoryStats();
    expect(stats.usedChars).toBeLessThanOrEqual(2_000);
    expect(stats.spilled).toBeGreaterThan(1_000); // read at start without keeping the values
    const b = recorder();
    const run2 = bus2.consume(b.p, log);
    await until(() => b.seen.length === 1_500);
    await new Promise((r) => setTimeout(r, 50));
    inOrder(b.seen, 1_500, "b");
    await run2.stop();
    await bus2.close();
  });

  it("compacts a drained log, spills into the new one, and goes on from the committed offsets after a restart", async () => {
    const dir = tempDir();
    const open = () => EmbeddedBus.open({ partitions: 1, dir, log, memoryChars: 2_000, compactBytes: 20_000 });
    const file = join(dir, "bus", "frontier.inbox", "0.log");
    const bus1 = await open();
    const a = recorder();
    const run1 = bus1.consume(a.p, log);
    await produceMany(bus1, 1_000, "a");
    await until(() => a.seen.length === 1_000);
    await until(() => statSync(file).size === 0); // every record committed: the log was emptied
    // records past the budget again, their positions in the new file
    await run1.stop();
    await produceMany(bus1, 1_000, "b");
    expect(bus1.memoryStats().spilled).toBeGreaterThan(500);
    const run1b = bus1.consume(a.p, log);
    await until(() => a.seen.length === 2_000);
    inOrder(a.seen.slice(1_000), 1_000, "b");
    await until(() => statSync(file).size === 0);
    await run1b.stop();
    await bus1.close();

    // an empty log after a restart: new records take the offsets after the committed ones, and are delivered, also
    // to a group whose saved offset is behind them (a group of an older version)
    const offsetsFile = join(dir, "bus", "offsets.json");
    const saved = JSON.parse(readFileSync(offsetsFile, "utf8")) as Record<string, Record<string, number[]>>;
    writeFileSync(offsetsFile, JSON.stringify({ ...saved, stale: { "frontier.inbox": [5] } }));
    const bus2 = await open();
    const b = recorder();
    const stale = recorder("stale");
    const run2 = bus2.consume(b.p, log);
    const run3 = bus2.consume(stale.p, log);
    await produceMany(bus2, 300, "c");
    await until(() => b.seen.length === 300 && stale.seen.length === 300);
    inOrder(b.seen, 300, "c");
    inOrder(stale.seen, 300, "c");
    await run2.stop();
    await run3.stop();
    await bus2.close();
  });

  it("memory-only (no directory) keeps everything in memory, as before", async () => {
    const bus = await EmbeddedBus.open({ partitions: 2, dir: null, log, memoryChars: 1_000 });
    let open = false;
    const c = recorder("rec", { gate: () => open });
    const run = bus.consume(c.p, log);
    await produceMany(bus, 500);
    expect(bus.memoryStats().spilled).toBe(0);
    open = true;
    await until(() => c.seen.length === 500);
    inOrder(c.seen, 500);
    await run.stop();
  });
});

/** The heap after a full collection, in MB. */
function heapMB(): number {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

describe("the bus's memory with a long queue", () => {
  it("200,000 messages of ~300 bytes produced before any is consumed: the heap grows by the budget, not the queue", { timeout: 180_000 }, async () => {
    const n = 200_000;
    const pad = "x".repeat(230); // ~300 characters a value
    const budget = 8 * 1024 * 1024;
    const bus = await EmbeddedBus.open({ partitions: 12, dir: tempDir(), log, memoryChars: budget });
    let open = false;
    const c = recorder("rec", { gate: () => open });
    const run = bus.consume(c.p, log);
    const h0 = heapMB();
    await produceMany(bus, n, "m", 1_000, pad);
    const grown = heapMB() - h0;
    const stats = bus.memoryStats();
    // the queue's values are 60 MB: without the budget the heap grew by ~130 MB (values, entries, keys)
    expect(stats.usedChars).toBeLessThanOrEqual(budget);
    expect(stats.spilled).toBeGreaterThan(n * 0.8);
    expect(grown, `heap grew ${grown.toFixed(1)} MB for ${n} queued messages with a budget of ${budget / 1e6} MB (${stats.spilled} on disk only)`).toBeLessThan((3 * budget) / 1e6 + 10);
    open = true;
    await until(() => c.seen.length === n, 150_000);
    expect(new Set(c.seen).size).toBe(n);
    await run.stop();
    await bus.close();
  });
});
