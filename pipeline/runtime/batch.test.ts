import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { batchHandler, type RawMessage } from "./batch.ts";
import type { Bus, Emission, Processor } from "./bus.ts";
import { createLogger } from "./logger.ts";
import { crawlOptions } from "../usecases/request-options.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const log = createLogger("silent");
const task = (i: number): RawMessage => ({
  key: "c1",
  offset: String(i),
  value: JSON.stringify({ crawlId: "c1", url: `https://s.test/${i}`, urlKey: `k${i}`, depth: 0, attempt: 0, options: crawlOptions({ url: "https://s.test/" }, 100) }),
});

describe("the batch step of a parallel stage", () => {
  it("keeps nothing of a message once its emissions are delivered, while the rest of the batch runs", async () => {
    const produced: string[] = [];
    const bus: Bus = { produce: async (list) => void produced.push(...list.map((e) => e.key)), close: async () => {} };
    const pages: WeakRef<object>[] = [];
    let releaseLast!: () => void;
    let finished!: Promise<number>;
    const lastStarted = new Promise<void>((started) => {
      const p: Processor<{ urlKey: string }, void> = {
        name: "fetch", topic: "fetch.tasks", schema: "fetch-task", group: "g", broadcast: false, mode: "parallel", concurrency: 2,
        createBatch() {},
        async handle(m): Promise<Emission[]> {
          if (m.value.urlKey === "k19") {
            started();
            await new Promise<void>((r) => (releaseLast = r));
          }
          const page = { body: `<p>${m.value.urlKey}</p>`.repeat(10_000) }; // what fetch-render emits: the page
          pages.push(new WeakRef(page));
          return [{ topic: "pages.fetched", key: m.value.urlKey, value: page }];
        },
      };
      const handle = batchHandler(p, bus, log, new AbortController().signal);
      finished = handle(0, Array.from({ length: 20 }, (_, i) => task(i)));
    });
    await lastStarted;
    await new Promise((r) => setTimeout(r, 20)); // the other 19 delivered; WeakRefs may die after this turn
    expect(produced).toHaveLength(19);
    gc();
    // the batch is still running (its last message waits): the 19 delivered pages must be collectable
    expect(pages.filter((w) => w.deref() !== undefined)).toHaveLength(0);
    releaseLast();
    expect(await finished).toBe(20);
    expect(produced).toHaveLength(20);
  });
});
