import { describe, expect, it } from "vitest";
import { messageHandler } from "./batch.ts";
import type { Consumed, Processor } from "./bus.ts";
import { deadLetterCounts } from "./dead-letters.ts";
import { InfrastructureError } from "./errors.ts";
import { createLogger } from "./logger.ts";
import { Metrics } from "./metrics.ts";

const log = createLogger("silent");
const msg: Consumed<{ n: number }> = { partition: 0, offset: "7", key: "c1", value: { n: 1 } } as Consumed<{ n: number }>;

function processor(fail: () => never): Processor<{ n: number }, void> {
  return {
    name: "t", topic: "sink.pages", schema: "fetch-task", group: "g", broadcast: false, mode: "parallel", concurrency: 1,
    createBatch() {},
    async handle() {
      fail();
    },
  } as unknown as Processor<{ n: number }, void>;
}

const countOf = (topic: string, code: string) => deadLetterCounts().find((c) => c.topic === topic && c.code === code)?.count ?? 0;

describe("dead letters", () => {
  it("are counted by topic and code, in /metrics", async () => {
    const before = countOf("sink.pages", "BUG");
    const out = await messageHandler(processor(() => {
      throw new TypeError("x is undefined");
    }), log, new AbortController().signal)(msg, undefined);
    expect(out.filter((e) => e.deadLetter)).toHaveLength(1);
    expect(countOf("sink.pages", "BUG")).toBe(before + 1);
    const text = await new Metrics({ role: "test" }).text();
    expect(text).toMatch(new RegExp(`^trawl_dead_letters_total\\{topic="sink.pages",code="BUG",role="test"\\} ${before + 1}$`, "m"));
  });

  it("an infrastructure failure is retried until it passes, never dead-lettered", async () => {
    const before = deadLetterCounts().reduce((n, c) => n + c.count, 0);
    let calls = 0;
    const p = processor(() => {
      throw new InfrastructureError("STORE_UNAVAILABLE", "Code: 81, e.displayText() = DB::Exception: Database trawl doesn't exist");
    });
    const handle = p.handle.bind(p);
    p.handle = async (m, b) => (++calls < 3 ? handle(m, b) : []);
    expect(await messageHandler(p, log, new AbortController().signal)(msg, undefined)).toEqual([]);
    expect(calls).toBe(3);
    expect(deadLetterCounts().reduce((n, c) => n + c.count, 0)).toBe(before);
  });
});
