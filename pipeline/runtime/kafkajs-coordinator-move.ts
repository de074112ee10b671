// kafkajs heartbeats the group coordinator it found when it joined, and looks it up again only when its consume loop
// fails and rejoins. When the coordinator moved (its broker was killed, restarted or shut down, or the lead of the
// group's __consumer_offsets partition moved), a consumer in a long batch went on heartbeating the old broker ("not the
// correct coordinator", or connection errors) until its batch ended. The new coordinator, which had loaded the group
// with every member's session restarted, heard nothing for a session, dropped the member and rebalanced the group: in
// a crawl with a broker killed, the 15-22 s stalls and hundreds of pages fetched again (issue 32).
// ConsumerGroup.heartbeat is wrapped here: a heartbeat that failed because its coordinator moved (or its broker is
// unreachable) looks the coordinator up again and, when another broker coordinates now, is sent there; later heartbeats
// and offset commits go there too, as after a rejoin, but without leaving the batch or the group. Only when no other
// coordinator is found (in time) does the caller get the error.
import { createRequire } from "node:module";

interface BrokerLike {
  nodeId?: number;
}

interface ConsumerGroupLike {
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

/** A heartbeat failed because its coordinator moved or cannot be reached: worth looking the coordinator up again. */
export function coordinatorMoved(err: unknown): boolean {
  const e = err as { type?: string; name?: string; code?: string } | null;
  return MOVED.has(e?.type ?? "") || UNREACHABLE.has(e?.name ?? "") || e?.code === "ECONNREFUSED";
}

/** Look-ups in progress, one per consumer group object: each resolves to whether another coordinator was found. */
const looking = new WeakMap<ConsumerGroupLike, Promise<boolean>>();

/** Coordinator look-ups answered after a failed heartbeat, and those that named another broker (for tests and logs). */
export const coordinatorLookups = { count: 0, moved: 0 };

/** Looks the group's coordinator up again; whether it is another broker than the one that failed (now in use). */
function lookUp(group: ConsumerGroupLike): Promise<boolean> {
  let lookup = looking.get(group);
  if (lookup) return lookup;
  const failed = group.coordinator;
  lookup = group.cluster.findGroupCoordinator({ groupId: group.groupId }).then(
    (found) => {
      coordinatorLookups.count++;
      if (found.nodeId === failed?.nodeId) return false;
      coordinatorLookups.moved++;
      // a rejoin that ran meanwhile found its own coordinator, which is newer than this answer
      if (group.coordinator !== failed) return true;
      group.coordinator = found;
      // commits too: they went on to the old one, and its "not the correct coordinator" made kafkajs rejoin the group
      if (group.offsetManager) group.offsetManager.coordinator = found;
      return true;
    },
    () => false, // none found yet (a new one is still being elected): a later failed heartbeat asks again
  ).finally(() => looking.delete(group));
  looking.set(group, lookup);
  return lookup;
}

const require = createRequire(import.meta.url);
const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as { prototype: ConsumerGroupLike };
const heartbeat = ConsumerGroup.prototype.heartbeat;

/** How long a failed heartbeat waits for the look-up (its retries can take minutes while no coordinator is elected). */
const lookUpWaitMs = (group: ConsumerGroupLike) => Math.max(1000, Math.min(5000, Math.floor(group.sessionTimeout / 2)));

ConsumerGroup.prototype.heartbeat = async function (this: ConsumerGroupLike, args: { interval: number }): Promise<void> {
  try {
    await heartbeat.call(this, args);
  } catch (err) {
    // The heartbeat is sent again to the coordinator found, and only its answer counts: kafkajs' own loop calls this
    // between fetches too, and any error there (a NOT_COORDINATOR one included) made it rejoin the group once the batch
    // in progress ended. kafkajs awaits heartbeats in its fetch loop and on stop, so the look-up is awaited for a few
    // seconds at most: past that the error goes to the caller, and the look-up's answer, when it comes, is in place
    // for the next heartbeat.
    if (!coordinatorMoved(err)) throw err;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), lookUpWaitMs(this))));
    const moved = await Promise.race([lookUp(this), waited]).finally(() => clearTimeout(timer));
    if (!moved) throw err;
    await heartbeat.call(this, args);
  }
};
