// kafkajs 2.2.4 keeps a consumer group's coordinator in `ConsumerGroup.coordinator` from the join on, and looks it up
// again only on a rejoin. When the coordinator's broker goes away (SIGTERM, kill -9), every heartbeat fails with a
// connection error ("connect ECONNREFUSED", later "Broker N not found in the cached metadata"): the fetch loop retries
// the same dead broker until its retries run out (~10 s), crashes, and the consumer starts again, a second ~1-10 s;
// the heartbeats of a batch in flight are only logged meanwhile. Measured in test/integration/broker-loss.test.ts: the
// consumers of a group whose coordinator was stopped with SIGTERM stalled 17-34 s, though the new coordinator was
// there at once. Patched here: a heartbeat that cannot reach the coordinator fails as NOT_COORDINATOR_FOR_GROUP, the
// error the broker gives when the coordinator moved, so kafkajs' fetch loop rejoins at once (join looks the
// coordinator up again) and the runner abandons a batch in flight the same way (runner.ts, GROUP_MOVED_ON).
import { createRequire } from "node:module";

interface ConsumerGroupLike {
  heartbeat(opts: { interval: number }): Promise<void>;
}

/** kafkajs' errors that say the broker itself is away (not that it answered with an error). */
const UNREACHABLE = new Set(["KafkaJSConnectionError", "KafkaJSConnectionClosedError", "KafkaJSBrokerNotFound"]);

export class CoordinatorUnreachableError extends Error {
  readonly type = "NOT_COORDINATOR_FOR_GROUP";
  readonly retriable = true;
  constructor(cause: Error) {
    super(`the group coordinator cannot be reached (${cause.message}): rejoining, which finds it again`, { cause });
    this.name = "CoordinatorUnreachableError";
  }
}

/** The error a heartbeat gives instead of `err` (the same one unless the coordinator is unreachable). */
export function heartbeatError(err: unknown): unknown {
  return err instanceof Error && UNREACHABLE.has(err.name) ? new CoordinatorUnreachableError(err) : err;
}

const require = createRequire(import.meta.url);
const ConsumerGroup = require("kafkajs/src/consumer/consumerGroup.js") as { prototype: ConsumerGroupLike };
const heartbeat = ConsumerGroup.prototype.heartbeat;

ConsumerGroup.prototype.heartbeat = async function (this: ConsumerGroupLike, opts: { interval: number }) {
  try {
    await heartbeat.call(this, opts);
  } catch (err) {
    throw heartbeatError(err);
  }
};
