// The Kafka consume loop (@platformatic/kafka, public API only): a group member (the client joins, heartbeats and
// follows the assignment) and a fetch loop of Trawl's own over the partitions it is assigned. Each fetched batch of a
// partition goes to the batch step (batch.ts) or the lanes (lanes.ts); the partition is fetched again only once its
// batch resolved, and the batch's offset is committed only after that. Nothing else touches Kafka offsets.
import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { IS_CONTROL, ListOffsetTimestamps, type MessagesStream } from "@platformatic/kafka";
import { physicalTopic } from "../topology.ts";
import type { Bus, Processor } from "./bus.ts";
import { batchHandler, type RawMessage, type RunnerHandle } from "./batch.ts";
import { laneHandler } from "./lanes.ts";
import type { Config } from "./config.ts";
import { errorMessage } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { messageText } from "./registry.ts";
import { backoffMs, sleep } from "./retry.ts";
import { OffsetCommits } from "./offset-commits.ts";
import { CommitFailures } from "./commit-failures.ts";
import { StartDeadline } from "./start-wait.ts";
import { CLASSIC_ASSIGNORS, groupProtocol, type KafkaClients } from "./kafka-clients.ts";
import { kafkaSecurityFailure } from "./kafka-security.ts";
import { hasApiId } from "./kafka-admin.ts";
import { Waker } from "./waker.ts";
import type { FetchResponse, Member } from "./runner-member.ts";

/** Bytes a stage's fetch asks for per partition (see fetchFrom). */
const FETCH_BYTES_PER_PARTITION = 1024 * 1024;
/** Batches of different partitions handled at once (a parallel stage then has several batches' work to keep busy). */
const BATCHES_AT_ONCE = 4;
/** How often the loop compares its partitions with the group's assignment (a revoked partition's batch is abandoned). */
const OWNERSHIP_CHECK_MS = 100;
/**
 * How long the group waits for members to rejoin (classic) or to give partitions up (consumer protocol). The client
 * holds it to at least its default session (60 s) for the consumer protocol, whose session the broker sets.
 */
const REBALANCE_TIMEOUT_MS = 60_000;

/** The broker's error code for a fetch offset outside the log (deleted by retention, or a topic created again). */
const OFFSET_OUT_OF_RANGE = 1;

export type { RunnerHandle };

export async function startRunner<T, B>(
  deps: { kafka: KafkaClients; bus: Bus; config: Config; log: Logger },
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
  const waker = new Waker();
  // keyed mode: a batch is done once its messages are in lanes; each lane's progress is committed as it goes
  const lanes = processor.mode === "keyed" ? laneHandler(processor, bus, log, stopping.signal, (partition, next) => void commits.add(partition, next)) : null;
  const handle = lanes?.accept ?? batchHandler(processor, bus, log, stopping.signal);
  // keyed mode: a partition's batch is "in flight" only while its lanes are full (lanes.ts bounds what they hold), and
  // such a partition must not hold the others
  const batchesAtOnce = lanes ? Number.POSITIVE_INFINITY : BATCHES_AT_ONCE;
  let member: Member | undefined;

  // Offsets of handled batches, committed together at most every KAFKA_COMMIT_INTERVAL_MS (0: each batch at once),
  // for the partitions the member still owns. A crash before the commit redelivers those messages, which every stage
  // handles idempotently anyway. Commits that keep failing (commit-failures.ts) make the member leave and join again
  // (a new consumer) rather than run on with stale offsets; the uncommitted messages are delivered again.
  const commitFailures = new CommitFailures();
  const commits = new OffsetCommits(config.kafkaCommitIntervalMs, async (offsets) => {
    const m = member;
    const owned = offsets.filter(([p]) => m !== undefined && m.leases.has(p));
    if (!m || owned.length === 0) return;
    try {
      await m.consumer.commit({ offsets: owned.map(([partition, offset]) => ({ topic, partition, offset: BigInt(offset), leaderEpoch: -1 })) });
      commitFailures.succeeded();
    } catch (err) {
      // a rebalance took the partitions (their new owner goes on from the last commit) or the broker is away
      log.warn({ err: errorMessage(err), offsets: Object.fromEntries(owned), failures: commitFailures.count + 1 }, "offset commit failed; the messages will be delivered again");
      if (commitFailures.failed()) restart(m, "offset commits keep failing: the consumer rejoins its group");
    }
  });

  // batches being handled: a stop waits for them (and their commits) before it leaves the group
  const inflight = new Set<Promise<void>>();

  /** Brings the loop's partitions in line with the group's assignment; true when they changed. */
  function sync(m: Member): boolean {
    const assigned = new Set(m.consumer.assignments?.find((a) => a.topic === topic)?.partitions ?? []);
    const rejoined = m.rejoined;
    m.rejoined = false;
    const revoked = [...m.leases.keys()].filter((p) => rejoined || !assigned.has(p));
    const added = [...assigned].filter((p) => rejoined || !m.leases.has(p));
    if (revoked.length === 0 && added.length === 0) return false;
    for (const p of revoked) {
      const batch = m.busy.get(p);
      if (batch && !batch.signal.aborted) {
        log.warn({ partition: p }, "the group moved on during a batch: no further message of it starts");
        batch.abort();
      }
      m.leases.delete(p);
      m.positions.delete(p);
    }
    // keyed mode: a revoked partition's lanes are dropped (its batch waiting for room took messages they never run: its
    // lease is gone, so it moves no position); a partition kept through an incremental rebalance (the consumer
    // protocol) keeps its lanes, its lease and its position, so the work done past its committed offset is not done
    // again (a reset of every partition made a replica joining fetch hundreds of pages twice: bench/replica-churn.ts)
    lanes?.reset(revoked);
    for (const p of added) m.leases.set(p, {});
    const partitions = [...assigned].sort((a, b) => a - b);
    log.info({ partitions }, "partitions assigned");
    processor.onPartitionsAssigned?.(partitions);
    return true;
  }

  /** Positions of owned partitions not known yet: the group's committed offsets, else the start (the end when broadcast). */
  async function lookUpPositions(m: Member): Promise<void> {
    const missing = [...m.leases.keys()].filter((p) => !m.positions.has(p) && !m.busy.has(p));
    if (missing.length === 0) return;
    const leases = new Map(missing.map((p) => [p, m.leases.get(p)]));
    const committed = (await m.consumer.listCommittedOffsets({ topics: [{ topic, partitions: missing }] })).get(topic) ?? [];
    const fallback = missing.some((p) => (committed[p] ?? -1n) < 0n)
      ? (await m.consumer.listOffsets({ topics: [topic], partitions: { [topic]: missing }, timestamp: processor.broadcast ? ListOffsetTimestamps.LATEST : ListOffsetTimestamps.EARLIEST })).get(topic) ?? []
      : [];
    for (const p of missing) {
      if (m.leases.get(p) !== leases.get(p)) continue; // moved meanwhile
      const c = committed[p] ?? -1n;
      const offset = c >= 0n ? c : fallback[p];
      if (offset !== undefined && offset >= 0n) m.positions.set(p, offset);
    }
  }

  /** Where a partition whose offset is out of range goes on (retention deleted what it was to read). */
  async function resetOutOfRange(m: Member, partitions: number[]): Promise<void> {
    const offsets = (await m.consumer.listOffsets({ topics: [topic], partitions: { [topic]: partitions }, timestamp: processor.broadcast ? ListOffsetTimestamps.LATEST : ListOffsetTimestamps.EARLIEST })).get(topic) ?? [];
    for (const p of partitions) {
      const o = offsets[p];
      if (o !== undefined && m.leases.has(p)) {
        log.warn({ partition: p, from: m.positions.get(p)?.toString(), to: o.toString() }, "offset out of range: going on from the log's start");
        m.positions.set(p, o);
      }
    }
  }

  /** One fetch from `node` for `partitions`; each partition that brought messages gets a batch started. */
  async function fetchFrom(m: Member, node: number, topicId: string, partitions: number[]): Promise<void> {
    const idle = sparse || m.idle.has(node);
    const requested = new Map(partitions.map((p) => [p, m.positions.get(p) as bigint]));
    const leases = new Map(partitions.map((p) => [p, m.leases.get(p)]));
    let response: FetchResponse;
    try {
      response = await m.fetcher.fetch({
        node,
        topics: [{ topicId, partitions: partitions.map((p) => ({ partition: p, fetchOffset: requested.get(p) as bigint, partitionMaxBytes: FETCH_BYTES_PER_PARTITION, currentLeaderEpoch: -1, lastFetchedEpoch: -1 })) }],
        // a fetch brings at most ~1 MB per partition and 4 MB in all (the broker still returns a first record batch
        // that is larger, KIP-74, so a 16 MB page gets through). A bulk loop waits for KAFKA_FETCH_MIN_BYTES or
        // KAFKA_FETCH_MAX_WAIT_MS while pages flow; after a fetch that brought nothing from a broker (and always for a
        // sparse loop) the next one is answered by the first message and waits up to KAFKA_IDLE_FETCH_MAX_WAIT_MS.
        minBytes: idle ? 1 : config.kafkaFetchMinBytes,
        maxWaitTime: idle ? config.kafkaIdleFetchMaxWaitMs : config.kafkaFetchMaxWaitMs,
        maxBytes: 4 * FETCH_BYTES_PER_PARTITION,
      });
    } catch (err) {
      if (m.closed) return;
      const partial = (err as { response?: FetchResponse }).response;
      const outOfRange = partial?.responses?.flatMap((t) => t.partitions.filter((p) => p.errorCode === OFFSET_OUT_OF_RANGE).map((p) => p.partitionIndex)) ?? [];
      if (outOfRange.length > 0 || hasApiId(err, "OFFSET_OUT_OF_RANGE")) {
        await resetOutOfRange(m, outOfRange.length > 0 ? outOfRange : partitions).catch((e: unknown) => log.warn({ err: errorMessage(e) }, "looking up the log's start failed"));
        return;
      }
      log.warn({ node, partitions, err: errorMessage(err) }, "fetch failed; fetching again");
      m.fetcher.clearMetadata();
      await sleep(500, stopping.signal);
      return;
    }
    let brought = false;
    for (const t of response.responses) {
      for (const part of t.partitions) {
        const p = part.partitionIndex;
        const from = requested.get(p);
        if (from === undefined || m.leases.get(p) !== leases.get(p) || m.positions.get(p) !== from || m.busy.has(p)) continue;
        const messages: RawMessage[] = [];
        let end = from;
        for (const batch of part.records ?? []) {
          const last = batch.firstOffset + BigInt(batch.lastOffsetDelta);
          if (last + 1n > end) end = last + 1n;
          if (batch.attributes & IS_CONTROL) continue;
          for (const record of batch.records) {
            const offset = batch.firstOffset + BigInt(record.offsetDelta);
            if (offset < from) continue;
            messages.push({ key: record.key?.toString() ?? null, value: messageText(record.value), offset: offset.toString() });
          }
        }
        if (messages.length > 0) {
          brought = true;
          startBatch(m, p, messages, end);
        } else if (end > from) m.positions.set(p, end); // control records only
      }
    }
    if (brought) m.idle.delete(node);
    else m.idle.add(node);
  }

  function startBatch(m: Member, partition: number, messages: RawMessage[], end: bigint): void {
    const abandoned = new AbortController();
    const lease = m.leases.get(partition);
    m.busy.set(partition, abandoned);
    const started = Date.now();
    const run = (async () => {
      try {
        const done = await handle(partition, messages, abandoned.signal);
        if (done > 0 && m.leases.get(partition) !== lease) log.warn({ partition }, "batch finished after a rebalance; not committing");
        else if (done > 0) {
          const next = done === messages.length ? end : BigInt(messages[done - 1]?.offset as string) + 1n;
          m.positions.set(partition, next); // the rest of an abandoned or stopped batch is fetched again
          // (abandoned: the done prefix is still committed while the member owns the partition)
          if (!lanes) await commits.add(partition, next.toString());
          log.debug({ partition, messages: messages.length, ms: Date.now() - started, offset: next.toString() }, "batch committed");
        }
      } catch (err) {
        log.error({ err: errorMessage(err), partition, offset: messages[0]?.offset }, "batch failed; fetching it again");
        await sleep(1000, stopping.signal);
      } finally {
        if (m.busy.get(partition) === abandoned) m.busy.delete(partition);
        waker.ring();
      }
    })();
    inflight.add(run);
    void run.finally(() => inflight.delete(run));
  }

  async function fetchLoop(m: Member): Promise<void> {
    const fetching = new Map<number, Promise<void>>();
    /** partitions in a fetch in flight (a leader that moved meanwhile is not asked for them a second time) */
    const asked = new Set<number>();
    let failures = 0;
    while (!m.closed && !stopping.signal.aborted) {
      try {
        sync(m);
        await lookUpPositions(m);
        const ready = [...m.leases.keys()].filter((p) => m.positions.has(p) && !m.busy.has(p) && !asked.has(p));
        if (ready.length === 0 || m.busy.size >= batchesAtOnce) {
          await waker.nap(OWNERSHIP_CHECK_MS);
          continue;
        }
        const metadata = await m.fetcher.metadata({ topics: [topic] });
        const t = metadata.topics.get(topic);
        if (!t) throw new Error(`topic ${topic} not in the metadata`);
        const byNode = new Map<number, number[]>();
        for (const p of ready) {
          const leader = t.partitions[p]?.leader ?? -1;
          if (leader < 0 || fetching.has(leader)) continue;
          byNode.set(leader, [...(byNode.get(leader) ?? []), p]);
        }
        for (const [node, partitions] of byNode) {
          for (const p of partitions) asked.add(p);
          const f = fetchFrom(m, node, t.id, partitions).finally(() => {
            fetching.delete(node);
            for (const p of partitions) asked.delete(p);
            waker.ring();
          });
          fetching.set(node, f);
        }
        failures = 0;
        await waker.nap(OWNERSHIP_CHECK_MS);
      } catch (err) {
        if (m.closed || stopping.signal.aborted) break;
        log.warn({ err: errorMessage(err), attempt: failures }, "consume loop: Kafka request failed; trying again");
        m.fetcher.clearMetadata();
        await sleep(backoffMs(failures++, 200, 5000), stopping.signal);
      }
    }
    await Promise.allSettled([...fetching.values()]);
  }

  /** Creates the group member and its fetch loop (a start, or a restart). */
  async function join(): Promise<Member> {
    const protocol = await groupProtocol(kafka, config.kafkaGroupProtocol);
    const groupOptions = protocol === "consumer"
      ? { groupProtocol: "consumer" as const, rebalanceTimeout: REBALANCE_TIMEOUT_MS }
      : { sessionTimeout: config.kafkaSessionTimeoutMs, heartbeatInterval: heartbeatMs, rebalanceTimeout: Math.max(config.kafkaSessionTimeoutMs, 30_000), protocols: CLASSIC_ASSIGNORS };
    const consumer = kafka.consumer({ groupId: group, autocommit: false, ...groupOptions });
    const fetcher = kafka.consumer({ groupId: group, autocommit: false });
    fetcher.topics.track(topic);
    const partial = { consumer, fetcher } as Partial<Member> & Pick<Member, "consumer" | "fetcher">;
    // the client's own recoveries failed (a rejoin that gave up, heartbeats that stalled): a new member
    consumer.on("error", (err: Error) => restart(member === partial ? (partial as Member) : undefined, `consumer failed: ${errorMessage(err)}`));
    consumer.on("consumer:heartbeat:stalled", ({ stalledFor }) => restart(member === partial ? (partial as Member) : undefined, `heartbeats stalled for ${stalledFor} ms`));
    fetcher.on("error", (err: Error) => log.warn({ err: errorMessage(err) }, "fetch client error"));
    let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>;
    try {
      // the stream joins the group and follows its assignment; its records are never read (the loop fetches)
      stream = await consumer.consume({ topics: [topic], mode: "committed", fallbackMode: processor.broadcast ? "latest" : "earliest", autocommit: false });
    } catch (err) {
      await consumer.close(true).catch(() => undefined);
      await fetcher.close().catch(() => undefined);
      throw kafkaSecurityFailure(err, config) ?? err;
    }
    const m = Object.assign(partial, { stream, leases: new Map(), positions: new Map(), busy: new Map(), idle: new Set<number>(), rejoined: false, closed: false, loop: Promise.resolve(), timer: undefined }) as Member;
    stream.on("error", (err: Error) => restart(member === m ? m : undefined, `consumer stream failed: ${errorMessage(err)}`));
    if (protocol === "classic") {
      // eager rebalancing: a rebalance takes every partition away until the new assignment comes
      consumer.on("consumer:group:rebalance", () => {
        for (const [partition, batch] of m.busy) {
          if (batch.signal.aborted) continue;
          log.warn({ partition }, "the group moved on during a batch: no further message of it starts");
          batch.abort();
        }
        void commits.flush();
      });
      consumer.on("consumer:group:join", () => {
        m.rejoined = true;
        waker.ring();
      });
    } else {
      consumer.on("consumer:group:rebalance", () => waker.ring());
    }
    // a revoked partition's batch is abandoned within OWNERSHIP_CHECK_MS, whatever the loop is waiting for
    m.timer = setInterval(() => {
      if (sync(m)) waker.ring();
    }, OWNERSHIP_CHECK_MS);
    m.loop = fetchLoop(m);
    log.info({ group, protocol }, "consumer running");
    return m;
  }

  async function leave(m: Member): Promise<void> {
    m.closed = true;
    clearInterval(m.timer);
    waker.ring();
    await m.loop;
    await m.stream.close().catch((err: unknown) => log.debug({ err: errorMessage(err) }, "closing the consumer stream failed"));
    await m.consumer.close(true).catch((err: unknown) => log.warn({ err: errorMessage(err) }, "leaving the group failed"));
    await m.fetcher.close().catch(() => undefined);
  }

  // A member whose client gave up (or whose commits keep failing) is replaced: it stops fetching, its batches in
  // flight finish and their done prefix is committed, it leaves the group, and a new member joins, with backoff,
  // until it runs. An infrastructure failure is retried, never the end of the stage.
  let restarting: Promise<void> | undefined;
  function restart(m: Member | undefined, reason: string): void {
    if (!m || m !== member || stopping.signal.aborted || restarting) return;
    log.error({ reason }, "consumer failed; starting it again");
    restarting = (async () => {
      m.closed = true;
      clearInterval(m.timer);
      waker.ring();
      await m.loop;
      await Promise.allSettled([...inflight]);
      await commits.flush();
      await leave(m);
      lanes?.reset();
      for (let attempt = 0; !stopping.signal.aborted; attempt++) {
        await sleep(backoffMs(attempt, 500, 10_000), stopping.signal);
        if (stopping.signal.aborted) return;
        try {
          member = await join();
          log.warn({ attempt }, "consumer running again after a failure");
          return;
        } catch (err) {
          log.warn({ err: errorMessage(err), attempt }, "consumer restart failed; retrying");
        }
      }
    })().finally(() => (restarting = undefined));
  }

  // A topic created a moment ago may not be in every broker's metadata yet: retriable. So is a Kafka that went away
  // after the process reached it (a restart while a replica starts): it is waited for as at start, up to
  // INFRA_START_WAIT_S, then INFRA_UNREACHABLE names KAFKA_BROKERS. A refused login or an untrusted certificate is not.
  const kafkaStart = new StartDeadline(config.infraStartWaitS * 1000, log);
  member = await kafkaStart.run({ server: "Kafka", variable: "KAFKA_BROKERS", where: config.kafkaBrokers }, join, {
    retries: Number.MAX_SAFE_INTEGER,
    initialMs: 200,
    maxMs: 2000,
    // a refused login, an untrusted certificate or options the client refuses (PLT_KFK_USER) do not pass by waiting
    retriable: (err) => kafkaSecurityFailure(err, config) === undefined && (err as { code?: string }).code !== "PLT_KFK_USER",
  });

  return {
    async stop() {
      stopping.abort(); // no new message starts; the ones in flight finish and their prefix is committed
      waker.ring();
      await restarting;
      const m = member;
      if (m) {
        m.closed = true;
        clearInterval(m.timer);
        await m.loop;
      }
      await Promise.allSettled([...inflight]);
      await lanes?.drain();
      await commits.flush();
      if (m) await leave(m);
      log.info("consumer stopped");
    },
  };
}
