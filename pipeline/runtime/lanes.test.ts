// Keyed mode on the embedded bus: a held lane holds only itself, each lane keeps its order, the partition holds at
// most `concurrency` messages, and the committed offset never passes a message that is not done.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Consumed, Emission, Processor } from "./bus.ts";
import { EmbeddedBus } from "./embedded-bus.ts";
import { InfrastructureError } from "./errors.ts";
import { createLogger } from "./logger.ts";

const log = createLogger("silent");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

type Msg = { type: "CancelRequested"; crawlId: string };
/** Message `a1` is in lane `a`. */
const msg = (id: string): Emission => ({ topic: "frontier.inbox", key: "k", value: { type: "CancelRequested", crawlId: id } });

function keyed(opts: { concurrency?: number; hold?: Set<string>; failing?: Set<string> } = {}) {
  const seen: string[] = [];
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const p: Processor<Msg, void> = {
    name: "lanes", topic: "frontier.inbox", schema: "frontier-inbox", group: "lanes", broadcast: false,
    mode: "keyed", concurrency: opts.concurrency ?? 100,
    lane: (m: Consumed<Msg>) => m.value.crawlId.slice(0, 1),
    createBatch() {},
    async handle(m: Consumed<Msg>) {
      const id = m.value.crawlId;
      started.push(id);
      if (opts.failing?.has(id)) throw new InfrastructureError("STORE_UNAVAILABLE", "store down");
      if (opts.hold?.has(id)) await new Promise<void>((resolve) => gates.set(id, resolve));
      seen.push(id);
      return [];
    },
  };
  return { p, seen, started, release: (id: string) => gates.get(id)?.() };
}

async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 5));
  }
}

const lag = async (bus: EmbeddedBus) => (await bus.queueStats()).find((q) => q.group === "lanes")?.lag;

describe("keyed mode (lanes)", () => {
  it("a held message holds only its own lane; each lane in order; the offset waits for the held message", async () => {
    const bus = await EmbeddedBus.open({ partitions: 1, dir: null, log });
    const k = keyed({ hold: new Set(["a1"]) });
    const run = bus.consume(k.p, log);
    await bus.produce(["a1", "b1", "b2", "a2", "c1"].map(msg));
    await until(() => k.seen.length === 3);
    expect(k.seen.filter((id) => id.startsWith("b"))).toEqual(["b1", "b2"]);
    expect(k.seen).toContain("c1");
    expect(k.started).not.toContain("a2");
    expect(await lag(bus)).toBe(5); // a1 (offset 0) is not done: nothing is committed
    k.release("a1");
    await until(() => k.seen.length === 5);
    expect(k.seen.slice(3)).toEqual(["a1", "a2"]);
    await run.stop();
    expect(await lag(bus)).toBe(0);
  });

  it("holds at most `concurrency` messages of a partition", async () => {
    const bus = await EmbeddedBus.open({ partitions: 1, dir: null, log });
    const k = keyed({ concurrency: 2, hold: new Set(["a1", "b1"]) });
    const run = bus.consume(k.p, log);
    await bus.produce(["a1", "b1", "c1"].map(msg));
    await until(() => k.started.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(k.started).toEqual(["a1", "b1"]);
    k.release("b1");
    await until(() => k.seen.includes("c1"));
    k.release("a1");
    await run.stop();
  });

  it("a lane's queued messages are one batch; the offset moves only after its afterProduce, which is tried again when it fails", async () => {
    const bus = await EmbeddedBus.open({ partitions: 1, dir: null, log });
    const k = keyed({ hold: new Set(["a1"]) });
    const batches: string[][] = [];
    let failOnce = true;
    let gate: (() => void) | undefined;
    const p: Processor<Msg, string[]> = {
      ...(k.p as unknown as Processor<Msg, string[]>),
      createBatch: () => [],
      async handle(m: Consumed<Msg>, batch: string[]) {
        await k.p.handle(m, undefined);
        batch.push(m.value.crawlId);
        return [];
      },
      async afterProduce(batch: string[]) {
        if (batch.includes("a2") && failOnce) {
          failOnce = false;
          throw new Error("a bug, once");
        }
        if (batch.includes("a2")) await new Promise<void>((resolve) => (gate = resolve));
        batches.push([...batch]);
      },
    };
    const run = bus.consume(p, log);
    await bus.produce(["a1", "a2", "a3"].map(msg));
    await until(() => k.started.includes("a1"));
    k.release("a1");
    await until(() => gate !== undefined, 5000);
    // a2 and a3 waited behind a1: handled as one batch, not done until its afterProduce is
    expect(batches).toEqual([["a1"]]);
    expect(await lag(bus)).toBe(2);
    gate?.();
    await until(() => batches.length === 2);
    expect(batches[1]).toEqual(["a2", "a3"]);
    await run.stop();
    expect(await lag(bus)).toBe(0);
  });

  it("after a stop, what was not done is delivered again, with what was done behind it; nothing before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-lanes-"));
    dirs.push(dir);
    const bus1 = await EmbeddedBus.open({ partitions: 1, dir, log });
    const k1 = keyed({ failing: new Set(["a1"]) });
    const run1 = bus1.consume(k1.p, log);
    await bus1.produce(["b1", "a1", "b2"].map(msg));
    await until(() => k1.seen.length === 2);
    expect(k1.seen).toEqual(["b1", "b2"]);
    await run1.stop(); // a1 still failing (retried until the stop): not done
    await bus1.close();

    const bus2 = await EmbeddedBus.open({ partitions: 1, dir, log });
    const k2 = keyed();
    const run2 = bus2.consume(k2.p, log);
    await until(() => k2.seen.length === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(k2.seen.sort()).toEqual(["a1", "b2"]);
    await run2.stop();
    await bus2.close();
  });
});
