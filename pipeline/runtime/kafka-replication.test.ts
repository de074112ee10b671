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
    const w = existingTopicWarnings(new Map([["t.a", { replicas: 1, partitions: 4 }], ["t.b", { replicas: 3, partitions: 4 }]]), { factor: 3, partitions: 4 });
    expect(w).toEqual([expect.stringMatching(/^topic t\.a exists with 1 replica, fewer than KAFKA_REPLICATION_FACTOR/)]);
  });

  it("warns about existing topics with fewer partitions than KAFKA_PARTITIONS asks, and not about more", () => {
    const w = existingTopicWarnings(new Map([["t.a", { replicas: 1, partitions: 4 }], ["t.b", { replicas: 1, partitions: 24 }], ["t.c", { replicas: 1, partitions: 12 }]]), { factor: 1, partitions: 12 });
    expect(w).toEqual([expect.stringMatching(/^topic t\.a exists with 4 partitions, fewer than KAFKA_PARTITIONS asks \(12\): at most 4 replicas .*--partitions 12/)]);
  });
});
