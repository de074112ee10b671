// Trawl's Kafka admin calls (@platformatic/kafka's Admin): reaching the cluster at start, creating the topology's
// topics, and reading the consumer groups' positions for the queue page.
import { ListOffsetTimestamps, type Admin, type ClusterMetadata } from "@platformatic/kafka";
import type { QueueStat } from "./bus.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import { physicalTopic, processors, topics, type ProcessorSpec } from "../topology.ts";
import { retry } from "./retry.ts";
import { kafkaSecurityFailure } from "./kafka-security.ts";
import { existingTopicWarnings, replicationFor } from "./kafka-replication.ts";
import type { KafkaClients } from "./kafka-clients.ts";

export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** Runs `fn` with an admin client of `kafka`, closed after it. */
export async function withAdmin<T>(kafka: KafkaClients, fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  try {
    return await fn(admin);
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** The number of brokers of the cluster (a refused login or an untrusted certificate says so by name). */
async function brokerCount(admin: Admin, config: Config): Promise<number> {
  try {
    return (await admin.metadata({ topics: [], forceUpdate: true })).brokers.size;
  } catch (err) {
    throw kafkaSecurityFailure(err, config) ?? err;
  }
}

/** Kafka answers: an admin client connects and lists the brokers (a refused login or an untrusted certificate says so by name). */
export async function reachKafka(kafka: KafkaClients, config: Config): Promise<void> {
  await withAdmin(kafka, (admin) => brokerCount(admin, config));
}

/** Creates every topic of the topology (and its dead-letter twin) that does not exist yet. */
export async function ensureTopics(kafka: KafkaClients, config: Config, log: Logger): Promise<void> {
  await withAdmin(kafka, async (admin) => {
    // the first connection of a start: a refused login or an untrusted certificate stops it, naming what to check
    const brokers = await brokerCount(admin, config);
    const existing = new Set(await admin.listTopics());
    const wanted = topics.flatMap((t) => [
      { topic: physicalTopic(config.topicPrefix, t.name), retentionMs: t.retentionMs },
      { topic: physicalTopic(config.topicPrefix, t.name, true), retentionMs: 7 * 24 * 3600 * 1000 },
    ]);
    const { factor, minInsync, warnings } = replicationFor(config, brokers);
    const present = wanted.filter((t) => existing.has(t.topic)).map((t) => t.topic);
    const described: ClusterMetadata["topics"] = present.length === 0 ? new Map() : (await admin.metadata({ topics: present, forceUpdate: true })).topics;
    const existingTopics = new Map([...described].map(([name, t]) => [name, { replicas: Math.min(...t.partitions.map((p) => p.replicas.length)), partitions: t.partitionsCount }]));
    warnings.push(...existingTopicWarnings(existingTopics, { factor, partitions: config.topicPartitions }));
    for (const warning of warnings) log.warn({ brokers, replicationFactor: factor, partitions: config.topicPartitions }, warning);
    const missing = wanted.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    // one request per retention (a request's configs apply to each of its topics)
    const byRetention = new Map<number, string[]>();
    for (const t of missing) byRetention.set(t.retentionMs, [...(byRetention.get(t.retentionMs) ?? []), t.topic]);
    for (const [retentionMs, names] of byRetention) {
      await admin.createTopics({
        topics: names,
        partitions: config.topicPartitions,
        replicas: factor,
        configs: [
          { name: "retention.ms", value: String(retentionMs) },
          { name: "max.message.bytes", value: String(MAX_MESSAGE_BYTES) },
          { name: "min.insync.replicas", value: String(minInsync) },
        ],
      }).catch((err: unknown) => {
        // another process created them meanwhile (replicas starting together): theirs are as good
        if (!String((err as Error).message).includes("already exists") && !hasApiId(err, "TOPIC_ALREADY_EXISTS")) throw err;
      });
    }
    await awaitLeaders(admin, missing.map((t) => t.topic));
    log.info({ topics: missing.map((t) => t.topic), replicationFactor: factor, minInsyncReplicas: minInsync }, "created topics");
  });
}

/** Whether `err` (or an error it carries) is the broker's error `apiId` (e.g. TOPIC_ALREADY_EXISTS). */
export function hasApiId(err: unknown, apiId: string): boolean {
  const seen: unknown[] = [err];
  for (let i = 0; i < seen.length && i < 50; i++) {
    const e = seen[i] as { apiId?: string; cause?: unknown; errors?: unknown[] } | null;
    if (!e || typeof e !== "object") continue;
    if (e.apiId === apiId) return true;
    if (e.cause !== undefined) seen.push(e.cause);
    if (Array.isArray(e.errors)) seen.push(...e.errors);
  }
  return false;
}

/**
 * Waits until every partition of the topics just created has a leader in the metadata a broker gives (a broker that
 * has not learnt of a topic yet answers without it, which a loaded broker shows for a moment even alone).
 */
export async function awaitLeaders(admin: Admin, names: string[]): Promise<void> {
  await retry(async () => {
    const metadata = await admin.metadata({ topics: names, forceUpdate: true });
    const led = names.every((n) => {
      const t = metadata.topics.get(n);
      return t !== undefined && t.partitions.length > 0 && t.partitions.every((p) => p !== undefined && p.leader >= 0);
    });
    if (!led) throw new Error("the topics just created have no leaders yet");
  }, { retries: 30, initialMs: 100, maxMs: 1000, retriable: () => true });
}

/** End offsets (the next offset to be written) of each partition of `topic`. */
export async function endOffsets(admin: Admin, topic: string): Promise<{ partition: number; high: bigint }[]> {
  const metadata = await admin.metadata({ topics: [topic] });
  const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
  const listed = await admin.listOffsets({ topics: [{ name: topic, partitions: Array.from({ length: count }, (_, p) => ({ partitionIndex: p, timestamp: ListOffsetTimestamps.LATEST })) }] });
  return (listed.find((t) => t.name === topic)?.partitions ?? []).map((p) => ({ partition: p.partitionIndex, high: p.offset })).sort((a, b) => a.partition - b.partition);
}

/** Committed offsets of `group` on `topic`, by partition (-1: none). */
export async function committedOffsets(admin: Admin, group: string, topic: string, partitions: number[]): Promise<Map<number, bigint>> {
  const groups = await admin.listConsumerGroupOffsets({ groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: partitions }] }] });
  const out = new Map<number, bigint>();
  for (const g of groups) for (const t of g.topics) if (t.name === topic) for (const p of t.partitions) out.set(p.partitionIndex, p.committedOffset);
  return out;
}

/** Produced counts and lag of every stage's consumer group, read with the admin client. */
export async function kafkaQueueStats(kafka: KafkaClients, config: Config): Promise<QueueStat[]> {
  return withAdmin(kafka, async (admin) => {
    const out: QueueStat[] = [];
    for (const t of topics) {
      const topic = physicalTopic(config.topicPrefix, t.name);
      const offsets = await endOffsets(admin, topic);
      const produced = offsets.reduce((n, o) => n + Number(o.high), 0);
      // broadcast groups (one per API process, from the end of the topic) have no meaningful lag
      const groups = Object.values(processors as Record<string, ProcessorSpec>).filter((p) => p.topic === t.name && !p.broadcast).map((p) => p.group);
      for (const g of groups) {
        const committed = await committedOffsets(admin, `${config.groupPrefix}${g}`, topic, offsets.map((o) => o.partition));
        const partitions = offsets.map((o) => ({ partition: o.partition, lag: Math.max(0, Number(o.high) - Math.max(0, Number(committed.get(o.partition) ?? 0n))) }));
        out.push({ topic: t.name, group: g, produced, lag: partitions.reduce((n, p) => n + p.lag, 0), partitions });
      }
    }
    return out;
  });
}
