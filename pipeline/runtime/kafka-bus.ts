// Kafka adapter of the Bus port (kafkajs): an idempotent producer with acks=all, topic creation from the topology.
import "./kafkajs-encoder.ts"; // first: it replaces kafkajs' Encoder before kafkajs loads it
import { Kafka, logLevel as kafkaLogLevel, type Producer, type Admin, type logCreator } from "kafkajs";
import type { Bus, Emission, QueueStat } from "./bus.ts";
import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import { physicalTopic, processors, topicSpec, topics, type ProcessorSpec } from "../topology.ts";
import { InfrastructureError } from "./errors.ts";
import { retry } from "./retry.ts";
import type { RegistryCodec } from "./registry.ts";
import { GroupSender } from "./group-send.ts";
import { compressionType, type KafkaCompression } from "./kafka-compression.ts";
import { kafkaSecurity, kafkaSecurityFailure } from "./kafka-security.ts";
import { existingTopicWarnings, replicationFor } from "./kafka-replication.ts";
import { recordingPartitioner, sendBatchAcknowledged, type ChosenPartitions } from "./kafkajs-acked-send.ts";
import "./kafkajs-crc32c.ts";
import "./kafkajs-request-queue.ts";

export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const PRODUCER_RETRY = { initialRetryTime: 100, maxRetryTime: 1000, multiplier: 2, factor: 0.2, retries: 60 };
const LIMITED_RETRIES_WARNING = "Limiting retries for the idempotent producer may invalidate EoS guarantees";

function pinoLogCreator(log: Logger): logCreator {
  return () => ({ level, log: entry }) => {
    const { message, ...rest } = entry;
    const fields = { kafka: rest.namespace ?? entry.namespace, ...rest };
    // kafkajs retries on its own and logs each attempt as ERROR; what finally fails reaches us as a thrown error
    // (the producer's retries are bounded on purpose: a failed send replaces the producer, KafkaBus.send)
    if (message === LIMITED_RETRIES_WARNING) log.debug(fields, message);
    else if (level === kafkaLogLevel.ERROR || level === kafkaLogLevel.WARN) log.warn(fields, message);
    else if (level === kafkaLogLevel.INFO) log.debug(fields, message);
    else log.trace(fields, message);
  };
}

/**
 * The one kafkajs client factory: every Kafka client of Trawl (roles, tools, tests) gets its brokers and security
 * (KAFKA_SECURITY_PROTOCOL, SASL, TLS files read now) from here. Throws ConfigError naming a bad variable. `retries`:
 * of each request and connection (a caller that retries the whole call itself, as a start does, asks for few).
 */
export function createKafka(config: Config, role: string, log: Logger, retries = 8): Kafka {
  return new Kafka({
    clientId: `${config.kafkaClientId}-${role}`,
    brokers: config.kafkaBrokers.split(",").map((b) => b.trim()).filter(Boolean),
    ...kafkaSecurity(config),
    logLevel: kafkaLogLevel.WARN,
    logCreator: pinoLogCreator(log.child({ component: "kafkajs" })),
    retry: { initialRetryTime: 200, retries },
    connectionTimeout: 5000,
  });
}

/** Kafka answers: an admin client connects and lists the brokers (a refused login or an untrusted certificate says so by name). */
export async function reachKafka(kafka: Kafka, config: Config): Promise<void> {
  const admin: Admin = kafka.admin();
  await admin.connect().catch((err: unknown) => {
    throw kafkaSecurityFailure(err, config) ?? err;
  });
  try {
    await admin.describeCluster();
  } finally {
    await admin.disconnect();
  }
}

/** Creates every topic of the topology (and its dead-letter twin) that does not exist yet. */
export async function ensureTopics(kafka: Kafka, config: Config, log: Logger): Promise<void> {
  const admin: Admin = kafka.admin();
  // the first connection of a start: a refused login or an untrusted certificate stops it, naming what to check
  await admin.connect().catch((err: unknown) => {
    throw kafkaSecurityFailure(err, config) ?? err;
  });
  try {
    const existing = new Set(await admin.listTopics());
    const wanted = topics.flatMap((t) => [
      { topic: physicalTopic(config.topicPrefix, t.name), retentionMs: t.retentionMs },
      { topic: physicalTopic(config.topicPrefix, t.name, true), retentionMs: 7 * 24 * 3600 * 1000 },
    ]);
    const { brokers } = await admin.describeCluster();
    const { factor, minInsync, warnings } = replicationFor(config, brokers.length);
    const present = wanted.filter((t) => existing.has(t.topic)).map((t) => t.topic);
    const replicas = present.length === 0 ? [] : (await admin.fetchTopicMetadata({ topics: present })).topics;
    const existingTopics = new Map(replicas.map((t) => [t.name, { replicas: Math.min(...t.partitions.map((p) => p.replicas.length)), partitions: t.partitions.length }]));
    warnings.push(...existingTopicWarnings(existingTopics, { factor, partitions: config.topicPartitions }));
    for (const warning of warnings) log.warn({ brokers: brokers.length, replicationFactor: factor, partitions: config.topicPartitions }, warning);
    const missing = wanted.filter((t) => !existing.has(t.topic));
    if (missing.length === 0) return;
    await admin.createTopics({
      // waited for below: kafkajs' own wait gives up when the broker it asks has not learnt of the topic yet (several
      // brokers: "This server does not host this topic-partition")
      waitForLeaders: false,
      topics: missing.map((t) => ({
        topic: t.topic,
        numPartitions: config.topicPartitions,
        replicationFactor: factor,
        configEntries: [
          { name: "retention.ms", value: String(t.retentionMs) },
          { name: "max.message.bytes", value: String(MAX_MESSAGE_BYTES) },
          { name: "min.insync.replicas", value: String(minInsync) },
        ],
      })),
    });
    await awaitLeaders(admin, missing.map((t) => t.topic));
    log.info({ topics: missing.map((t) => t.topic), replicationFactor: factor, minInsyncReplicas: minInsync }, "created topics");
  } finally {
    await admin.disconnect();
  }
}

/**
 * Waits until every partition of the topics just created has a leader. kafkajs' own wait (`waitForLeaders: true`) gives
 * up when the broker it asks has not learnt of a topic yet ("This server does not host this topic-partition"), which a
 * loaded broker shows for a moment even alone; here that answer is one more retry.
 */
export async function awaitLeaders(admin: Admin, names: string[]): Promise<void> {
  await retry(async () => {
    const led = (await admin.fetchTopicMetadata({ topics: names })).topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
    if (!led) throw new Error("the topics just created have no leaders yet");
  }, { retries: 30, initialMs: 100, maxMs: 1000, retriable: () => true });
}

/** Produced counts and lag of every stage's consumer group, read with the admin client. */
export async function kafkaQueueStats(kafka: Kafka, config: Config): Promise<QueueStat[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const out: QueueStat[] = [];
    for (const t of topics) {
      const topic = physicalTopic(config.topicPrefix, t.name);
      const offsets = await admin.fetchTopicOffsets(topic);
      const produced = offsets.reduce((n, o) => n + Number(o.high), 0);
      // broadcast groups (one per API process, from the end of the topic) have no meaningful lag
      const groups = Object.values(processors as Record<string, ProcessorSpec>).filter((p) => p.topic === t.name && !p.broadcast).map((p) => p.group);
      for (const g of groups) {
        const group = `${config.groupPrefix}${g}`;
        const committed = (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]?.partitions ?? [];
        const partitions = offsets.map((o) => ({ partition: o.partition, lag: Math.max(0, Number(o.high) - Math.max(0, Number(committed.find((c) => c.partition === o.partition)?.offset ?? 0))) }));
        out.push({ topic: t.name, group: g, produced, lag: partitions.reduce((n, p) => n + p.lag, 0), partitions });
      }
    }
    return out;
  } finally {
    await admin.disconnect();
  }
}

/** A request takes further produce calls only while under this size (a call is never split). */
const GROUP_SEND_BYTES = 1024 * 1024;

interface Outgoing {
  topic: string;
  key: string;
  value: string | Buffer;
  /** a public topic (crawl.pages, crawl.events, crawl.changes): its own compression */
  public: boolean;
}

export interface KafkaBusOptions {
  /** A produce call waits this long for others to share its request. */
  lingerMs?: number;
  /** Compression of the internal topics' batches and of the public topics' ones. */
  compression?: KafkaCompression;
  publicCompression?: KafkaCompression;
  /** Where a send that kafkajs left incomplete (kafkajs-acked-send.ts) is reported. */
  log?: Logger;
}

export class KafkaBus implements Bus {
  private readonly kafka: Kafka;
  private producer: Producer;
  private readonly prefix: string;
  private connected: Promise<void> | undefined;
  private readonly registry: RegistryCodec | undefined;
  /** Produce calls made while a request is in flight go out together in the next one (group-send.ts). */
  private readonly sender: GroupSender<Outgoing>;
  private readonly compression: KafkaCompression;
  private readonly publicCompression: KafkaCompression;
  /** The partition kafkajs chose for each record in flight (kafkajs-acked-send.ts). */
  private readonly chosen: ChosenPartitions = new WeakMap();
  private readonly log: Logger | undefined;

  /** With a registry, the public topics carry the Confluent wire format; every other topic plain JSON. */
  constructor(kafka: Kafka, prefix: string, registry?: RegistryCodec, options: KafkaBusOptions = {}) {
    const { lingerMs = 0, compression = "none", publicCompression = "none" } = options;
    this.log = options.log;
    this.prefix = prefix;
    this.registry = registry;
    this.compression = compression;
    this.publicCompression = publicCompression;
    this.kafka = kafka;
    this.producer = this.newProducer();
    this.sender = new GroupSender((out) => this.send(out), (m) => m.value.length + m.key.length, GROUP_SEND_BYTES, lingerMs);
  }

  /**
   * Idempotent: each record batch carries the producer's id and a sequence number per partition, so a batch that
   * kafkajs sends again after the broker wrote it (an answer lost with its connection, a time-out) is stored once
   * (test/integration/kafka-idempotence.test.ts). One request in flight per broker, as kafkajs' sequence numbers need;
   * Trawl sends one request at a time anyway (GroupSender). Retries: every second at most, for about 57 s, so that a send
   * outlasts a broker's death (its partitions get new leaders once the controller fences it, broker.session.timeout.ms,
   * 9 s) and goes on within a second of the move; written out, since kafkajs' defaults change with NODE_ENV=test (1 s at
   * most, 15 retries). Not kafkajs' idempotent default (without end): a send that fails leaves its partitions'
   * sequence numbers unknown, so `send` then replaces the producer (a new producer id, whose sequences start again).
   */
  private newProducer(): Producer {
    return this.kafka.producer({
      createPartitioner: recordingPartitioner(this.chosen),
      allowAutoTopicCreation: false,
      idempotent: true,
      maxInFlightRequests: 1,
      retry: PRODUCER_RETRY,
    });
  }

  connect(): Promise<void> {
    this.connected ??= this.producer.connect();
    return this.connected;
  }

  async produce(messages: Emission[]): Promise<void> {
    if (messages.length === 0) return;
    await this.connect();
    const out: Outgoing[] = [];
    for (const m of messages) {
      const encode = m.deadLetter ? undefined : this.registry?.encoderFor(m.topic);
      out.push({ topic: physicalTopic(this.prefix, m.topic, m.deadLetter), key: m.key, value: encode ? await encode(m.value) : (m.json ?? JSON.stringify(m.value)), public: topicSpec(m.topic).public && !m.deadLetter });
    }
    await this.sender.submit(out);
  }

  /** One request per compression in use (kafkajs compresses a whole request alike); each topic stays in one of them,
   * so its order is kept. */
  private async send(out: Outgoing[]): Promise<void> {
    const requests = new Map<KafkaCompression, Map<string, { key: string; value: string | Buffer }[]>>();
    for (const m of out) {
      const compression = m.public ? this.publicCompression : this.compression;
      const byTopic = requests.get(compression) ?? new Map<string, { key: string; value: string | Buffer }[]>();
      requests.set(compression, byTopic);
      const list = byTopic.get(m.topic) ?? [];
      list.push({ key: m.key, value: m.value });
      byTopic.set(m.topic, list);
    }
    const producer = this.producer;
    const sent = await Promise.allSettled([...requests].map(([compression, byTopic]) => sendBatchAcknowledged(producer, {
        acks: -1,
        timeout: 30000,
        compression: compressionType(compression),
        topicMessages: [...byTopic].map(([topic, msgs]) => ({ topic, messages: msgs })),
      }, this.chosen, {
        onResend: (missing) => this.log?.warn({ missing: missing.map((t) => ({ topic: t.topic, records: t.messages.length })) }, "kafka left records of a send unacknowledged (a partition's leader moved, kafkajs#1303); sending them again"),
      })));
    const failed = sent.find((s) => s.status === "rejected");
    if (!failed) return;
    // kafkajs rolled the sequence numbers of the failed request back, though the broker may have written it (a time-out,
    // a closed connection): the next batch under those numbers would be refused as out of order (for good: kafkajs never
    // resets them) or, with as many records, taken for a duplicate and dropped. A new producer has a new id.
    if (this.producer === producer) {
      this.producer = this.newProducer();
      this.connected = undefined;
      void producer.disconnect().catch((err: unknown) => this.log?.warn({ err }, "kafka: disconnecting the replaced producer failed"));
    }
    const err = failed.reason as Error;
    throw new InfrastructureError("BUS_UNAVAILABLE", `kafka produce failed: ${err.message}`, err);
  }

  async close(): Promise<void> {
    if (this.connected) await this.producer.disconnect();
  }
}
