// How many replicas the topics Trawl creates get, and how many must have a record before a produce succeeds
// (KAFKA_REPLICATION_FACTOR, KAFKA_MIN_INSYNC_REPLICAS), from the number of brokers the cluster has.
import { ConfigError, type Config } from "./config.ts";

export interface Replication {
  factor: number;
  minInsync: number;
  /** Said at start as warnings: a cluster that loses data with one broker, named by the variable that decides it. */
  warnings: string[];
}

/** Throws ConfigError naming the variable when the cluster cannot hold what is asked. */
export function replicationFor(config: Pick<Config, "kafkaReplicationFactor" | "kafkaMinInsyncReplicas">, brokers: number): Replication {
  const factor = config.kafkaReplicationFactor > 0 ? config.kafkaReplicationFactor : Math.max(1, Math.min(3, brokers));
  if (factor > brokers) {
    throw new ConfigError(`config: KAFKA_REPLICATION_FACTOR=${factor} is larger than the Kafka cluster (${brokers} broker${brokers === 1 ? "" : "s"}); set it to at most ${brokers}`);
  }
  const minInsync = config.kafkaMinInsyncReplicas > 0 ? config.kafkaMinInsyncReplicas : factor >= 3 ? 2 : 1;
  if (minInsync > factor) {
    throw new ConfigError(`config: KAFKA_MIN_INSYNC_REPLICAS=${minInsync} is more than the replication factor ${factor} (KAFKA_REPLICATION_FACTOR); no produce could succeed`);
  }
  const warnings: string[] = [];
  if (factor === 1 && brokers >= 3) {
    warnings.push(`KAFKA_REPLICATION_FACTOR=1 on a cluster of ${brokers} brokers: every topic Trawl creates has one copy, and losing its broker loses its records; set KAFKA_REPLICATION_FACTOR=3 (or 0)`);
  }
  return { factor, minInsync, warnings };
}

/** What an existing topic has: the fewest replicas of any of its partitions, and its partition count. */
export interface ExistingTopic {
  replicas: number;
  partitions: number;
}

/**
 * Warnings for existing topics with fewer replicas or partitions than asked (Trawl does not change a topic it did not
 * create): fewer replicas lose records with a broker, fewer partitions cap how many replicas of a role share its work.
 */
export function existingTopicWarnings(existing: Map<string, ExistingTopic>, ask: { factor: number; partitions: number }): string[] {
  const warnings: string[] = [];
  for (const [topic, { replicas, partitions }] of existing) {
    if (replicas < ask.factor) {
      warnings.push(`topic ${topic} exists with ${replicas} replica${replicas === 1 ? "" : "s"}, fewer than KAFKA_REPLICATION_FACTOR asks (${ask.factor}); Trawl does not change existing topics (kafka-reassign-partitions does)`);
    }
    if (partitions < ask.partitions) {
      warnings.push(`topic ${topic} exists with ${partitions} partition${partitions === 1 ? "" : "s"}, fewer than KAFKA_PARTITIONS asks (${ask.partitions}): at most ${partitions} replica${partitions === 1 ? "" : "s"} of the role reading it share its work; Trawl does not change existing topics (kafka-topics.sh --alter --partitions ${ask.partitions}, while no crawl runs: docs/operations.md)`);
    }
  }
  return warnings;
}
