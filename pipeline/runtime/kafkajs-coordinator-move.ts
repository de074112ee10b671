// kafkajs heartbeats the group coordinator it found when it joined, and looks it up again only when its consume loop
// fails and rejoins. When the coordinator moved (its broker was killed, restarted or shut down, or the lead of the
// group's __consumer_offsets partition moved), a consumer in a long batch went on heartbeating the old broker ("not the
// correct coordinator", or connection errors) until its batch ended. The new coordinator, which had loaded the group
// with every member's session restarted, heard nothing for a session, dropped the member and rebalanced the group: in
// a crawl with a broker killed, the 15-22 s stalls and hundreds of pages fetched again (issue 32).
// ConsumerGroup.heartbeat is wrapped here: a heartbeat that failed because its coordinator moved (or its broker is
// unreachable) looks the coordinator up again and, when another broker coordinates now, is sent there; later heartbeats
// and offset commits go there too, as after a rejoin, but without leaving the batch or the group. Only when no
// coordinator answers within a few seconds does the caller get the error.
import { createRequire } from "node:module";

interface BrokerLike {
  nodeId?: number;
}

export interface ConsumerGroupLike {
  groupId: string;
  sessionTimeout: number;
  coordinator: BrokerLike | null;
  /** commits go to its own copy of the coordinator, taken at the last join */
  offsetManager?: { coordinator: BrokerLike | null } | null;
  cluster: { findGroupCoordinator(args: { groupId: string }): Promise<BrokerLike> };
  heartbeat(args: { interval: number }): Promise<void>;
}

/** kafkajs error types that mean the broker asked is not (or no longer) the group's coordinator. */
const MOVED = new Set(["NOT_COORDINATOR_FOR_GROUP", "GROUP_COORDINATOR_NOT_AVAILABLE"]);
/** kafkajs error names of a broker that cannot be reached (down, restarting, cut off). */
const UNREACHABLE = new Set(["KafkaJSConnectionError", "KafkaJSConnectionClosedError", "KafkaJSRequestTimeoutError"]);

/**
 * The broker could not be reached (down, restarting, cut off), also when kafkajs gave up its own retries of that
 * (KafkaJSNumberOfRetriesExceeded, flagged not retriable, with the connection error as its cause).
 */
export function brokerUnreachable(err: unknown): boolean {
  for (let e = err as { name?: string; code?: string; cause?: unknown } | null, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (UNREACHABLE.has(e.name ?? "") || e.code === "ECONNREFUSED") return true;
  }
  return false;
}

/** A heartbeat failed because its coordinator moved or cannot be reached: worth looking the coordinator up again. */
export function coordinatorMoved(err: unknown): boolean {
  return MOVED.has((err as { type?: string } | null)?.type ?? "") || brokerUnreachable(err);
}

/** Coordinator look-ups answered after a failed heartbeat, and those that named another broker (for tests and logs). */
export const coordinatorLookups = { count: 0, moved: 0 };

/** Look-ups in progress, one per consumer group object. */
const looking = new WeakMap<ConsumerGroupLike, Promise<void>>();

/**
 * Looks the group's coordinator up again and, when another broker than the one in use is named, uses it. A look-up
 * that fails (no coordinator elected yet) leaves the one in use.
 */
function lookUp(group: ConsumerGroupLike): Promise<void> {
  let lookup = looking.get(group);
  if (lookup) return lookup;
  const current = group.coordinator;
  lookup = group.cluster.findGroupCoordinator({ groupId: group.groupId }).then(
    (found) => {
      coordinatorLookups.count++;
      // the same broker, or a rejoin that ran meanwhile found its own coordinator, which is newer than this answer
      if (found.nodeId === current?.nodeId || group.coordinator !== current) return;
      coordinatorLookups.moved++;
      group.coordinator = found;
      // commits too: they went on to the old one, and its "not the correct coordinator" made kafkajs rejoin the group
      if (group.offsetManager) group.offsetManager.coordinator = found;
    },
    () => undefined,
  ).finally(() => looking.delete(group));
  looking.set(group, lookup);
  return lookup;
}

const require = createRequire(import.meta.url);
const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as { prototype: ConsumerGroupLike };
const heartbeat = ConsumerGroup.prototype.heartbeat;

/** How long a failed heartbeat goes on trying (look-ups can take minutes while no coordinator is elected). */
const lookUpWaitMs = (group: ConsumerGroupLike) => Math.max(1000, Math.min(5000, Math.floor(group.sessionTimeout / 2)));
/** Pause between two tries of one failed heartbeat. */
const AGAIN_MS = 200;

/** Whether the promise settled within `ms` (its rejection is left to whoever else awaits it). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, ms))));
  return Promise.race([p.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}

/**
 * Sends a heartbeat with `send`; when it fails because the coordinator moved or cannot be reached, looks the
 * coordinator up again and sends it there, until it is answered or the group's wait is over (then the last error).
 */
export async function followCoordinator(group: ConsumerGroupLike, send: () => Promise<void>): Promise<void> {
  try {
    await send();
  } catch (err) {
    // The heartbeat is sent again to the coordinator found, and only its answer counts: kafkajs' own loop calls this
    // between fetches too, and any error there (a NOT_COORDINATOR one included) made it rejoin the group once the batch
    // in progress ended. kafkajs awaits heartbeats in its fetch loop and on stop, so this goes on for a few seconds at
    // most: past that the last error goes to the caller, and a look-up's answer, when it comes, is in place for the
    // next heartbeat. In that time a broker may still name the old coordinator, and the new one may answer "not the
    // correct coordinator" until it has taken the group over, or "loading the group": it is asked again each time, by
    // every caller (kafkajs shares one heartbeat between its callers: a caller whose first answer came from the new
    // coordinator, not yet in charge, must not give up on it because a look-up names that same broker).
    if (!coordinatorMoved(err)) throw err;
    const deadline = Date.now() + lookUpWaitMs(group);
    let last: unknown = err;
    for (;;) {
      if (!loading(last)) await within(lookUp(group), deadline - Date.now());
      if (Date.now() >= deadline) throw last;
      const sent = send();
      if (!(await within(sent, deadline - Date.now()))) throw last; // the broker in use does not answer within the wait
      try {
        return await sent;
      } catch (again) {
        if (!coordinatorMoved(again) && !loading(again)) throw again;
        last = again;
      }
      if (Date.now() + AGAIN_MS >= deadline) throw last;
      await new Promise((r) => setTimeout(r, AGAIN_MS));
    }
  }
}

const loading = (err: unknown) => (err as { type?: string } | null)?.type === "GROUP_LOAD_IN_PROGRESS";

ConsumerGroup.prototype.heartbeat = function (this: ConsumerGroupLike, args: { interval: number }): Promise<void> {
  return followCoordinator(this, () => heartbeat.call(this, args));
};
