// A keyed-mode processor for the runner's lane tests (kafka-lanes*.test.ts): lane = a message's first letter; a message
// whose crawl id is in `hold` waits until the test releases it (`held`); `handled` lists what ran, in order.
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Consumed, Processor } from "../../pipeline/runtime/bus.ts";

/** Polls `cond` every `everyMs` until it holds; throws naming `what` after `ms`. */
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000, everyMs = 50): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface HeldLanes {
  /** Messages (crawl ids) handled, by whichever runner. */
  handled: string[];
  /** The release of each message being held. */
  held: Map<string, () => void>;
  /** Crawl ids to hold when they come. */
  hold: Set<string>;
  processor(group: string, concurrency: number): Processor<TeamAdmissionMessage>;
}

export function heldLanes(): HeldLanes {
  const handled: string[] = [];
  const held = new Map<string, () => void>();
  const hold = new Set<string>();
  return {
    handled, held, hold,
    processor: (group, concurrency) => ({
      name: group, topic: "team.admission", schema: "team-admission", group, mode: "keyed", concurrency, broadcast: false, sparse: true,
      lane: (m: Consumed<TeamAdmissionMessage>) => m.value.crawlId.slice(0, 1),
      createBatch() {},
      async handle(m: Consumed<TeamAdmissionMessage>) {
        const id = m.value.crawlId;
        if (hold.has(id)) await new Promise<void>((resolve) => held.set(id, resolve));
        handled.push(id);
        return [];
      },
    }),
  };
}
