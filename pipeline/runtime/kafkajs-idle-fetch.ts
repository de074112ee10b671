// A bulk consume loop's fetch waits on the broker for KAFKA_FETCH_MIN_BYTES or KAFKA_FETCH_MAX_WAIT_MS, so that a batch
// carries many pages. That is right while pages flow, and wrong for the first message after a quiet spell: it waits
// out the whole 100 ms at every hop (a crawl's first fetch came ~400 ms after its POST, four hops), and an idle loop
// asks the broker ten times a second. kafkajs takes minBytes and maxWaitTime once per consumer, so ConsumerGroup.fetch
// is wrapped here: after a fetch that brought nothing from a broker, the next one to that broker is answered by the
// first message (minBytes 1) and waits up to the idle wait; after one that brought messages, the consumer's own
// settings apply again. Only the groups registered with `fetchWhenIdle` are affected.
import { createRequire } from "node:module";

interface BatchLike {
  isEmpty(): boolean;
}

interface ConsumerGroupLike {
  groupId: string;
  minBytes: number;
  maxWaitTime: number;
  fetch(nodeId: string): Promise<BatchLike[]>;
}

/** The consumer's own settings (read from it before the first change) and the brokers whose last fetch brought nothing. */
interface IdleState {
  minBytes: number;
  maxWaitTime: number;
  idle: Set<string>;
}

/** Idle wait per registered group id (an object per registration, so that an old one's end leaves a newer one be). */
const groups = new Map<string, { idleWaitMs: number }>();
const states = new WeakMap<ConsumerGroupLike, IdleState>();

/**
 * From now on, the consumer of `groupId` fetches with no byte minimum and a wait of `idleWaitMs` after a fetch that came
 * back empty, and with its own minBytes and maxWaitTime otherwise. Returns the function that ends it (call it when the
 * consumer is stopped: group ids are reused by the next consumer of the same stage).
 */
export function fetchWhenIdle(groupId: string, idleWaitMs: number): () => void {
  const entry = { idleWaitMs };
  groups.set(groupId, entry);
  return () => {
    if (groups.get(groupId) === entry) groups.delete(groupId);
  };
}

const require = createRequire(import.meta.url);
const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as { prototype: ConsumerGroupLike };
const fetch = ConsumerGroup.prototype.fetch;

ConsumerGroup.prototype.fetch = async function (this: ConsumerGroupLike, nodeId: string): Promise<BatchLike[]> {
  const idleWaitMs = groups.get(this.groupId)?.idleWaitMs;
  if (idleWaitMs === undefined) return fetch.call(this, nodeId);
  let state = states.get(this);
  if (!state) {
    state = { minBytes: this.minBytes, maxWaitTime: this.maxWaitTime, idle: new Set() };
    states.set(this, state);
  }
  // Set right before the call, from the settings (never saved and restored): kafkajs reads them a few awaits later, and
  // a concurrent fetch to another broker may set them in between; that fetch then runs with the other mode once.
  const idle = state.idle.has(nodeId);
  this.minBytes = idle ? 1 : state.minBytes;
  this.maxWaitTime = idle ? idleWaitMs : state.maxWaitTime;
  const batches = await fetch.call(this, nodeId);
  if (batches.every((b) => b.isEmpty())) state.idle.add(nodeId);
  else state.idle.delete(nodeId);
  return batches;
};
