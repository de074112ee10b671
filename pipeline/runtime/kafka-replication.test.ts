import { describe, expect, it } from "vitest";
import { existingTopicWarnings, replicationFor } from "./kafka-replication.ts";

const ask = (kafkaReplicationFactor: number, kafkaMinInsyncReplicas = 0) => ({ kafkaReplicationFactor, kafkaMinInsyncReplicas });

describe("replication of the topics Trawl creates", () => {
  it("defaults to three replicas, two in sync, and to what a smaller cluster has", () => {
    expect(replicationFor(ask(0), 1)).toEqual({ factor: 1, minInsync: 1, warnings: [] });
    expect(replicationFor(ask(0), 2)).toEqual({ factor: 2, minInsync: 1, warnings: [] });
    expect(replicationFor(ask(0), 3)).toEqual({ factor: 3, minInsync: 2, warnings: [] });
    expect(replicationFor(ask(0), 7)).toEqual({ factor: 3, minInsync: 2, warnings: [] });
  });

  it("stops a start whose factor is larger than the cluster, naming the variable", () => {
    expect(() => replicationFor(ask(3), 1)).toThrow(/KAFKA_REPLICATION_FACTOR=3 is larger than the Kafka cluster \(1 broker\)/);
    expect(() => replicationFor(ask(2, 3), 3)).toThrow(/KAFKA_MIN_INSYNC_REPLICAS=3/);
  });

  it("warns about factor 1 on three brokers or more, naming the variable", () => {
    expect(replicationFor(ask(1), 3).warnings).toEqual([expect.stringContaining("KAFKA_REPLICATION_FACTOR=1 on a cluster of 3 brokers")]);
    expect(replicationFor(ask(1), 2).warnings).toEqual([]);
  });

  it("warns about existing topics with fewer replicas than asked", () => {
    const w = existingTopicWarnings(new Map([["t.a", 1], ["t.b", 3]]), 3);
    expect(w).toEqual([expect.stringMatching(/^topic t\.a exists with 1 replica, fewer than KAFKA_REPLICATION_FACTOR/)]);
  });
});
