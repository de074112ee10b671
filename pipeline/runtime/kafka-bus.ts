// Kafka adapter of the Bus port (@platformatic/kafka): an idempotent producer with acks=all, keys placed on the
// partitions the Java client gives them (java-partitioner.ts).
import type { Producer } from "@platformatic/kafka";
import type { Bus, Emission } from "./bus.ts";
import type { Logger } from "./logger.ts";
import { physicalTopic, topicSpec } from "../topology.ts";
import { InfrastructureError } from "./errors.ts";
import type { RegistryCodec } from "./registry.ts";
import { GroupSender } from "./group-send.ts";
import { compressionType, type KafkaCompression } from "./kafka-compression.ts";
import { javaPartition } from "./java-partitioner.ts";
import type { KafkaClients } from "./kafka-clients.ts";

export { createKafka, KafkaClients } from "./kafka-clients.ts";
export { awaitLeaders, ensureTopics, kafkaQueueStats, MAX_MESSAGE_BYTES, reachKafka } from "./kafka-admin.ts";

/**
 * The partitioner of every Trawl producer: the Java client's (and librdkafka's murmur2_random, and the previous client's) choice for a
 * key. The client takes the partitioner's answer modulo the topic's partition count; toPositive(murmur2) is below
 * 2^31, so javaPartition(key, 2^31) is that number itself and the client's modulo gives javaPartition(key, count).
 */
export function javaPartitioner(_message: unknown, key: Buffer | undefined): number {
  return key ? javaPartition(key, 2 ** 31) : 0;
}

/** Retries of a send: every second at most, for about a minute (see newProducer). */
const PRODUCER_RETRIES = 60;
const producerRetryDelay = (_client: unknown, _op: string, attempt: number) => Math.min(1000, 100 * 2 ** Math.max(0, attempt - 1));

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
  log?: Logger;
}

export class KafkaBus implements Bus {
  private readonly producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  private readonly prefix: string;
  private readonly registry: RegistryCodec | undefined;
  /** Produce calls made while a request is in flight go out together in the next one (group-send.ts). */
  private readonly sender: GroupSender<Outgoing>;
  private readonly compression: KafkaCompression;
  private readonly publicCompression: KafkaCompression;
  private closed = false;
  private connected: Promise<void> | undefined;

  /** With a registry, the public topics carry the Confluent wire format; every other topic plain JSON. */
  constructor(kafka: KafkaClients, prefix: string, registry?: RegistryCodec, options: KafkaBusOptions = {}) {
    const { lingerMs = 0, compression = "none", publicCompression = "none" } = options;
    this.prefix = prefix;
    this.registry = registry;
    this.compression = compression;
    this.publicCompression = publicCompression;
    this.producer = this.newProducer(kafka);
    this.sender = new GroupSender((out) => this.send(out), (m) => m.value.length + m.key.length, GROUP_SEND_BYTES, lingerMs);
  }

  /**
   * Idempotent: each record batch carries the producer's id and a sequence number per partition, so a batch that the
   * client sends again after the broker wrote it (an answer lost with its connection, a time-out) is stored once
   * (test/integration/kafka-idempotence.test.ts); the client keeps one request in flight per broker and, after a send
   * that failed, takes a new producer id (whose sequences start again). acks=all. Retries: every second at most, for
   * about a minute, so that a send outlasts a broker's death (its partitions get new leaders once the controller
   * fences it, broker.session.timeout.ms, 9 s) and goes on within a second of the move.
   */
  private newProducer(kafka: KafkaClients): Producer<Buffer, Buffer, Buffer, Buffer> {
    return kafka.producer({
      idempotent: true,
      acks: -1,
      autocreateTopics: false,
      partitioner: javaPartitioner,
      retries: PRODUCER_RETRIES,
      retryDelay: producerRetryDelay,
    });
  }

  /** Reaches the cluster (the producer's first metadata request); sends do it themselves otherwise. */
  connect(): Promise<void> {
    this.connected ??= this.producer.metadata({ topics: [] }).then(() => undefined, (err: unknown) => {
      this.connected = undefined;
      throw err;
    });
    return this.connected;
  }

  async produce(messages: Emission[]): Promise<void> {
    if (messages.length === 0) return;
    const out: Outgoing[] = [];
    for (const m of messages) {
      const encode = m.deadLetter ? undefined : this.registry?.encoderFor(m.topic);
      out.push({ topic: physicalTopic(this.prefix, m.topic, m.deadLetter), key: m.key, value: encode ? await encode(m.value) : (m.json ?? JSON.stringify(m.value)), public: topicSpec(m.topic).public && !m.deadLetter });
    }
    await this.sender.submit(out);
  }

  /** One request per compression in use (a send is compressed alike); each topic stays in one of them, so its order is kept. */
  private async send(out: Outgoing[]): Promise<void> {
    const requests = new Map<KafkaCompression, { topic: string; key: Buffer; value: Buffer }[]>();
    for (const m of out) {
      const compression = m.public ? this.publicCompression : this.compression;
      const list = requests.get(compression) ?? [];
      requests.set(compression, list);
      list.push({ topic: m.topic, key: Buffer.from(m.key), value: typeof m.value === "string" ? Buffer.from(m.value) : m.value });
    }
    const sent = await Promise.allSettled([...requests].map(([compression, messages]) => this.producer.send({ messages, compression: compressionType(compression), acks: -1 })));
    const failed = sent.find((s) => s.status === "rejected");
    if (!failed) return;
    const err = failed.reason as Error;
    throw new InfrastructureError("BUS_UNAVAILABLE", `kafka produce failed: ${err.message}`, err);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.producer.close();
  }
}
