// The one factory of Trawl's Kafka clients (@platformatic/kafka): every client of Trawl (roles, tools, tests) gets
// its brokers and security (KAFKA_SECURITY_PROTOCOL, SASL, TLS files read once, here) from `createKafka`.
import { Admin, Consumer, Producer, type BaseOptions, type ConsumerOptions, type ProducerOptions } from "@platformatic/kafka";
import type { Config } from "./config.ts";
import type { Logger } from "./logger.ts";
import { kafkaSecurity } from "./kafka-security.ts";

/** Backoff of the client's own retries of one request: 200 ms doubling up to 2 s, with jitter. */
function retryDelay(_client: unknown, _operation: string, attempt: number): number {
  const base = Math.min(2000, 200 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.8 + Math.random() * 0.4));
}

export class KafkaClients {
  readonly brokers: string[];
  readonly clientId: string;
  readonly log: Logger;
  private readonly base: Omit<BaseOptions, "clientId">;

  constructor(brokers: string[], clientId: string, base: Omit<BaseOptions, "clientId" | "bootstrapBrokers">, log: Logger) {
    this.brokers = brokers;
    this.clientId = clientId;
    this.log = log;
    this.base = { ...base, bootstrapBrokers: brokers };
  }

  /** Options of a client of this role (`suffix` names a client among the role's). */
  options(suffix?: string): BaseOptions {
    return { ...this.base, clientId: suffix ? `${this.clientId}-${suffix}` : this.clientId };
  }

  admin(): Admin {
    return new Admin(this.options("admin"));
  }

  producer(options: Omit<ProducerOptions<Buffer, Buffer, Buffer, Buffer>, keyof BaseOptions> & Partial<BaseOptions>): Producer<Buffer, Buffer, Buffer, Buffer> {
    return new Producer({ ...this.options("producer"), ...options });
  }

  consumer(options: Omit<ConsumerOptions<Buffer, Buffer, Buffer, Buffer>, keyof BaseOptions> & Partial<BaseOptions>): Consumer<Buffer, Buffer, Buffer, Buffer> {
    return new Consumer({ ...this.options("consumer"), ...options } as ConsumerOptions<Buffer, Buffer, Buffer, Buffer>);
  }
}

/**
 * Clients for `role`, with the configured brokers and security. Throws ConfigError naming a bad variable. `retries`:
 * of each request (a caller that retries the whole call itself, as a start does, asks for few).
 */
export function createKafka(config: Config, role: string, log: Logger, retries = 8): KafkaClients {
  const brokers = config.kafkaBrokers.split(",").map((b) => b.trim()).filter(Boolean);
  return new KafkaClients(brokers, `${config.kafkaClientId}-${role}`, {
    ...kafkaSecurity(config),
    connectTimeout: 5000,
    timeout: 30_000,
    retries,
    retryDelay,
  }, log.child({ component: "kafka" }));
}

/** ConsumerGroupHeartbeat (KIP-848): v1 came with Kafka 4.0, where the consumer protocol is generally available. */
const CONSUMER_GROUP_HEARTBEAT = 68;

/**
 * The assignors a classic-protocol member offers: the client's round robin under its own name, and the same under the
 * name kafkajs gave it (Trawl's releases before @platformatic/kafka). A classic group needs one assignor name common to
 * every member, so without the second a rolling upgrade from such a release is refused (INCONSISTENT_GROUP_PROTOCOL)
 * while an old member is in the group; each member votes for the first name it offers that every member offers, so a
 * group of new members only uses `roundrobin`. Both encode the standard consumer protocol subscription and assignment, which either
 * client's leader reads.
 */
export const CLASSIC_ASSIGNORS = [{ name: "roundrobin", version: 1 }, { name: "RoundRobinAssigner", version: 1 }];

const protocols = new WeakMap<KafkaClients, Promise<"classic" | "consumer">>();

/**
 * The consumer group protocol of the stages (KAFKA_GROUP_PROTOCOL): `auto` asks the cluster once whether it offers
 * ConsumerGroupHeartbeat v1 (Kafka ≥ 4.0: the consumer protocol, KIP-848), else classic (Kafka 3.9).
 */
export function groupProtocol(kafka: KafkaClients, setting: string): Promise<"classic" | "consumer"> {
  if (setting === "classic" || setting === "consumer") return Promise.resolve(setting);
  let known = protocols.get(kafka);
  if (!known) {
    known = (async () => {
      const admin = kafka.admin();
      try {
        const apis = await admin.listApis();
        const heartbeat = apis.find((a) => a.apiKey === CONSUMER_GROUP_HEARTBEAT);
        return heartbeat !== undefined && heartbeat.maxVersion >= 1 ? "consumer" : "classic";
      } finally {
        await admin.close().catch(() => undefined);
      }
    })();
    known.catch(() => protocols.delete(kafka));
    protocols.set(kafka, known);
  }
  return known;
}
