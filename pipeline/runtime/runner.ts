// The Kafka consume loop: fetches batches with kafkajs, hands each to the batch step (batch.ts), and commits the
// batch's offset only after it resolved. Nothing else touches Kafka offsets.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Consumer, EachBatchPayload, Kafka } from "kafkajs";
import { physicalTopic } from "../topology.ts";
import type { Bus, Processor } from "./bus.ts";
import { batchHandler, type RunnerHandle } from "./batch.ts";
import { laneHandler } from "./lanes.ts";
import type { Config } from "./config.ts";
import { errorMessage } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { messageText } from "./registry.ts";
import { backoffMs, sleep } from "./retry.ts";
import { OffsetCommits } from "./offset-commits.ts";
import { CommitFailures } from "./commit-failures.ts";
import { fetchWhenIdle } from "./kafkajs-idle-fetch.ts";
// heartbeats follow the group's coordinator when it moves (kafkajs looked it up again only on a rejoin)
import { brokerUnreachable } from "./kafkajs-coordinator-move.ts";
import { StartDeadline } from "./start-wait.ts";

/** Heartbeat errors after which this member no longer owns its partitions as they were (kafkajs rejoins on each). */
const GROUP_MOVED_ON = new Set(["REBALANCE_IN_PROGRESS", "ILLEGAL_GENERATION", "UNKNOWN_MEMBER_ID"]);

/** Bytes a stage's fetch asks for per partition (see the consumer's settings). */
const FETCH_BYTES_PER_PARTITION = 1024 * 1024;

export type { RunnerHandle };

export async function startRunner<T, B>(
  deps: { kafka: Kafka; bus: Bus; config: Config; log: Logger },
  processor: Processor<T, B>,
): Promise<RunnerHandle> {
  const { kafka, bus, config } = deps;
  const log = deps.log.child({ component: processor.name, topic: processor.topic });
  const topic = physicalTopic(config.topicPrefix, processor.topic);
  const stopping = new AbortController();
  const group = processor.broadcast
    ? `${config.groupPrefix}${processor.group}.${hostname()}.${process.pid}.${randomBytes(3).toString("hex")}`
    : `${config.groupPrefix}${processor.group}`;
  // a broadcast loop (the API's event feed) is fetched like a sparse one: it must see each event without delay
  const sparse = processor.broadcast || processor.sparse === true;
  // a tenth of the session, at least once a second: a lost heartbeat or two never costs the partitions
  const heartbeatMs = Math.min(1000, Math.floor(config.kafkaSessionTimeoutMs / 10));
  const consumer: Consumer = kafka.consumer({
    groupId: group,
    sessionTimeout: config.kafkaSessionTimeoutMs,
    heartbeatInterval: heartbeatMs,
    // a fetch brings at most ~1 MB per partition and 4 MB in all (the broker still returns a first record batch that is
    // larger, KIP-74, so a 16 MB page gets through): a batch is decoded and handled in one turn of the event loop, and
    // 16 MB of pages at once stalled the API sharing it (status p99) and inflated the heap
    maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
    maxBytes: 4 * FETCH_BYTES_PER_PARTITION,
    // an idle fetch blocks up to maxWait; a graceful stop waits for it. minBytes > 1 trades latency for bigger batches.
    // A sparse topic's fetch is answered by its first message, so its longer wait only spaces out the idle polls.
    minBytes: sparse ? 1 : config.kafkaFetchMinBytes,
    maxWaitTimeInMs: sparse ? config.kafkaIdleFetchMaxWaitMs : config.kafkaFetchMaxWaitMs,
    allowAutoTopicCreation: false,
  });
  // a bulk loop whose last fetch brought nothing fetches like a sparse one until a message comes (kafkajs-idle-fetch.ts)
  const endIdleFetch = sparse
    ? () => {}
    : fetchWhenIdle(group, config.kafkaIdleFetchMaxWaitMs);
  // keyed mode: a batch is done once its messages are in lanes; each lane's progress is committed as it goes
  const lanes = processor.mode === "keyed" ? laneHandler(processor, bus, log, stopping.signal, (partition, next) => void commits.add(partition, next)) : null;
  const handle = lanes?.accept ?? batchHandler(processor, bus, log, stopping.signal);
  // after every rebalance, before any batch of the new assignment: forget the state of partitions that moved away
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = payload.memberAssignment[topic] ?? [];
    log.info({ partitions }, "partitions assigned");
    lanes?.reset(); // every partition is fetched again from its committed offset
    processor.onPartitionsAssigned?.(partitions);
  });

  // Offsets of handled batches, committed together at most every KAFKA_COMMIT_INTERVAL_MS (0: each batch at once).
  // A crash before the commit redelivers those messages, which every stage handles idempotently anyway.
  // Commits that keep failing (commit-failures.ts) make the consumer rejoin its group (the next batch throws kafkajs'
  // NOT_COORDINATOR_FOR_GROUP: kafkajs looks the coordinator up again and rejoins, without a LeaveGroup to the dead
  // one) rather than run on with stale offsets; the uncommitted messages are delivered again.
  const commitFailures = new CommitFailures();
  let rejoin = false;
  const commits = new OffsetCommits(config.kafkaCommitIntervalMs, async (offsets) => {
    try {
      await consumer.commitOffsets(offsets.map(([partition, offset]) => ({ topic, partition, offset })));
      commitFailures.succeeded();
    } catch (err) {
      // a rebalance took the partitions (their new owner goes on from the last commit) or the broker is away
      log.warn({ err: errorMessage(err), offsets: Object.fromEntries(offsets), failures: commitFailures.count + 1 }, "offset commit failed; the messages will be delivered again");
      if (commitFailures.failed()) {
        rejoin = true;
        log.error("offset commits keep failing: the consumer rejoins its group");
      }
    }
  });

  consumer.on(consumer.events.REBALANCING, () => void commits.flush());

  // batches being handled: a stop waits for them (and their commits) before it disconnects
  const inflight = new Set<Promise<void>>();
  function eachBatch(payload: EachBatchPayload): Promise<void> {
    const p = runBatch(payload);
    inflight.add(p);
    return p.finally(() => inflight.delete(p));
  }

  async function runBatch({ batch, heartbeat, isStale, resolveOffset }: EachBatchPayload): Promise<void> {
    if (rejoin) {
      rejoin = false;
      throw Object.assign(new Error("offset commits keep failing: rejoining the group"), { type: "NOT_COORDINATOR_FOR_GROUP" });
    }
    if (batch.messages.length === 0) return;
    const started = Date.now();
    // a heartbeat that says the group moved on (a rebalance, or this member is gone) abandons the batch: no further
    // message starts, and the error goes to kafkajs, which rejoins. Left running, a long batch (thousands of fetch
    // tasks) went on for its whole length beside the partition's new owner, which fetched the same pages again
    const abandoned = new AbortController();
    let lostBy: unknown;
    const beat = setInterval(() => heartbeat().catch((err) => {
      if (!GROUP_MOVED_ON.has((err as { type?: string }).type ?? "")) return log.debug({ err: errorMessage(err) }, "heartbeat failed");
      if (!lostBy) log.warn({ partition: batch.partition, err: errorMessage(err) }, "the group moved on during a batch: no further message of it starts");
      lostBy ??= err;
      abandoned.abort();
    }), heartbeatMs);
    try {
      const done = await handle(
        batch.partition,
        batch.messages.map((m) => ({ key: m.key?.toString() ?? null, value: messageText(m.value), offset: m.offset })),
        abandoned.signal,
      );
      if (done > 0 && isStale()) log.warn({ partition: batch.partition }, "batch finished after a rebalance; not committing");
      else if (done > 0) {
        const lastDone = batch.messages[done - 1]?.offset as string;
        const next = (BigInt(lastDone) + 1n).toString();
        resolveOffset(lastDone); // moves the fetch position
        // (abandoned: the done prefix is still committed when the group takes it, during a rebalance)
        if (!lanes) await commits.add(batch.partition, next);
        log.debug({ partition: batch.partition, messages: batch.messages.length, ms: Date.now() - started, offset: next }, "batch committed");
      }
      if (lostBy) throw lostBy;
    } finally {
      clearInterval(beat);
    }
  }

  async function begin(): Promise<void> {
    // A topic created a moment ago may not be in every broker's metadata yet (UNKNOWN_TOPIC_OR_PARTITION): retriable.
    // So is a Kafka that went away after the process reached it (a restart while a replica starts: kafkajs gives up
    // its own connection retries after ~6 s with an error it flags as not retriable, and the role exited): it is
    // waited for as at start, up to INFRA_START_WAIT_S, then INFRA_UNREACHABLE names KAFKA_BROKERS.
    const kafkaStart = new StartDeadline(config.infraStartWaitS * 1000, log);
    await kafkaStart.run({ server: "Kafka", variable: "KAFKA_BROKERS", where: config.kafkaBrokers }, async () => {
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: !processor.broadcast });
    }, {
      retries: Number.MAX_SAFE_INTEGER,
      initialMs: 200,
      maxMs: 2000,
      retriable: (err) => (err as { retriable?: boolean }).retriable === true || brokerUnreachable(err),
    });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // batches of up to 4 partitions in flight at once (parallel stages had 2: a convert process then had at most 2
      // batches' pages to keep its workers busy with while the others waited for their deliveries)
      partitionsConsumedConcurrently: 4,
      eachBatch,
    });
  }

  // kafkajs restarts a crashed consumer only after a retriable error; after any other one (e.g. "Failed to find group
  // coordinator" while the broker restarts) it stays stopped, and a process whose only work was this consumer exits 0.
  // An infrastructure failure is retried, never the end of the stage: start it again, with backoff, until it runs.
  let restarting: Promise<void> | undefined;
  let crashes = 0;
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart || stopping.signal.aborted) return;
    crashes++;
    log.error({ err: errorMessage(payload.error) }, "consumer crashed with a non-retriable error; starting it again");
    restarting ??= (async () => {
      for (let attempt = 0; !stopping.signal.aborted; attempt++) {
        await sleep(backoffMs(attempt, 500, 10_000), stopping.signal);
        if (stopping.signal.aborted) return;
        try {
          const before = crashes;
          await begin(); // a failed join crashes inside run(), before it returns
          if (crashes !== before) continue;
          log.warn({ attempt }, "consumer running again after a crash");
          return;
        } catch (err) {
          log.warn({ err: errorMessage(err), attempt }, "consumer restart failed; retrying");
        }
      }
    })().finally(() => (restarting = undefined));
  });

  try {
    await begin();
  } catch (err) {
    endIdleFetch();
    throw err;
  }
  log.info({ group }, "consumer running");

  return {
    async stop() {
      stopping.abort(); // no new message starts; the ones in flight finish and their prefix is committed
      await restarting;
      await Promise.allSettled([...inflight]);
      await lanes?.drain();
      await commits.flush();
      await consumer.disconnect();
      endIdleFetch();
      log.info("consumer stopped");
    },
  };
}
