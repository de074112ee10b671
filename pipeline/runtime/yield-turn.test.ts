// A consume loop working through a backlog that needs no I/O (the embedded bus in memory, logs written synchronously)
// lets the event loop serve sockets and timers between slices of TURN_SLICE_MS (yield-turn.ts), in each of the three
// modes. Before, the whole backlog ran as one task: a status GET arriving meanwhile waited for all of it.
import { describe, expect, it } from "vitest";
import type { Consumed, Processor } from "./bus.ts";
import { mapPool } from "./batch.ts";
import { EmbeddedBus } from "./embedded-bus.ts";
import { createLogger } from "./logger.ts";
import { TURN_SLICE_MS, turn } from "./yield-turn.ts";

const log = createLogger("silent");
type Msg = { type: "CancelRequested"; crawlId: string };

/** Synchronous work of `ms` (a page's parse, a log write). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Counts the timer callbacks that ran while `work` did (a timer re-armed every millisecond). */
async function ticksDuring(work: () => Promise<void>): Promise<number> {
  let ticks = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    ticks++;
    setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await work();
  running = false;
  return ticks;
}

describe("turn", () => {
  it("is undefined within a slice, then one wait shared by every caller until the event loop polled", async () => {
    // from the check phase (as from a timer) the poll and the timers come before the next setImmediate; the test's own
    // phase depends on what ran before it
    await new Promise((r) => setImmediate(r));
    await turn(); // a fresh slice (whatever ran before this test)
    expect(turn()).toBeUndefined();
    busy(TURN_SLICE_MS + 1);
    const a = turn();
    const b = turn();
    expect(a).toBeInstanceOf(Promise);
    expect(b).toBe(a);
    let timerRan = false;
    setTimeout(() => (timerRan = true), 0);
    busy(2); // the timer is due before the wait ends
    await a;
    expect(timerRan).toBe(true);
    expect(turn()).toBeUndefined();
  });

  it("mapPool over tasks that never wait lets timers run (300 ms of work: dozens of turns, not one)", async () => {
    const ticks = await ticksDuring(async () => {
      await mapPool(Array.from({ length: 3000 }, (_, i) => i), 4, async () => busy(0.1));
    });
    expect(ticks).toBeGreaterThan(20);
  });
});

describe.each(["ordered", "parallel", "keyed"] as const)("an embedded %s consumer working through a backlog", (mode) => {
  it("lets timers run between slices", async () => {
    const bus = await EmbeddedBus.open({ partitions: 1, dir: null, log });
    const count = 3000;
    let seen = 0;
    const p: Processor<Msg, void> = {
      name: "backlog", topic: "frontier.inbox", schema: "frontier-inbox", group: "backlog", broadcast: false,
      mode, concurrency: 4,
      createBatch() {},
      async handle(_m: Consumed<Msg>) {
        busy(0.1);
        seen++;
        return [];
      },
    };
    const run = bus.consume(p, log);
    // the backlog arrives in one produce (a page's links, a fetched batch): the consumer wakes to all of it at once
    const ticks = await ticksDuring(async () => {
      await bus.produce(Array.from({ length: count }, (_, i) => ({ topic: "frontier.inbox" as const, key: "k", value: { type: "CancelRequested", crawlId: `m${i}` } })));
      while (seen < count) await new Promise((r) => setImmediate(r));
    });
    await run.stop();
    expect(seen).toBe(count);
    expect(ticks).toBeGreaterThan(20);
  });
});
