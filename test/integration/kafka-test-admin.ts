// Admin calls of the Kafka fault tests that Trawl itself never makes (partition leaders, reassignments, topic
// configs), on @platformatic/kafka's public API: its Admin, and its exported request APIs on a broker's connection.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { alterPartitionReassignmentsV0, listPartitionReassignmentsV0, type Admin } from "@platformatic/kafka";
import { hasApiId } from "../../pipeline/runtime/kafka-admin.ts";

const run = promisify(execFile);

/** An admin call, again while the broker it asks has not learnt of a topic just created (each broker learns on its own). */
export async function again<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= 50 || !(hasApiId(err, "UNKNOWN_TOPIC_OR_PARTITION") || hasApiId(err, "LEADER_NOT_AVAILABLE") || String((err as Error).message).includes("not in the metadata"))) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** The partitions of `topic` as the cluster describes them now, in order. */
export async function partitionsOf(admin: Admin, topic: string): Promise<{ partitionId: number; leader: number; replicas: number[] }[]> {
  return again(async () => {
    const t = (await admin.metadata({ topics: [topic], forceUpdate: true })).topics.get(topic);
    if (!t) throw new Error(`${topic} not in the metadata`);
    return t.partitions.map((p, partitionId) => ({ partitionId, leader: p.leader, replicas: [...p.replicas] }));
  });
}

async function anyBroker(admin: Admin) {
  const metadata = await admin.metadata({ topics: [], forceUpdate: true });
  const connections = await admin.connectToBrokers([[...metadata.brokers.keys()][0] as number]);
  const connection = [...connections.values()][0];
  if (!connection) throw new Error("no broker connection");
  return connection;
}

/** Moves the replicas of one partition (the first listed leads once the move is done). */
export async function reassign(admin: Admin, topic: string, partition: number, replicas: number[]): Promise<void> {
  const connection = await anyBroker(admin);
  const res = await alterPartitionReassignmentsV0.api.async(connection, 30_000, false, [{ name: topic, partitions: [{ partitionIndex: partition, replicas }] }]);
  const failed = res.responses.flatMap((t) => t.partitions).find((p) => p.errorCode !== 0);
  if (res.errorCode !== 0 || failed) throw new Error(`reassignment refused: ${JSON.stringify({ errorCode: res.errorCode, failed })}`);
}

/** Whether a reassignment of the partition is still going on. */
export async function reassigning(admin: Admin, topic: string, partition: number): Promise<boolean> {
  const connection = await anyBroker(admin);
  const res = await listPartitionReassignmentsV0.api.async(connection, 30_000, [{ name: topic, partitionIndexes: [partition] }]);
  return res.topics.some((t) => t.partitions.length > 0);
}

/** A topic's configuration value. */
export async function topicConfig(admin: Admin, topic: string, name: string): Promise<string | null | undefined> {
  const [described] = await again(() => admin.describeConfigs({ resources: [{ resourceType: 2, resourceName: topic, configurationKeys: [name] }] }));
  return described?.configs.find((c) => c.name === name)?.value;
}

/**
 * The partitions of an internal topic (__consumer_offsets), which the client's metadata leaves out: read with kcat's
 * metadata listing (librdkafka).
 */
export async function internalPartitionsOf(brokers: string, topic: string): Promise<{ partitionId: number; leader: number; replicas: number[] }[]> {
  const { stdout } = await run("kcat", ["-b", brokers, "-L", "-t", topic, "-J"]);
  const listed = JSON.parse(stdout) as { topics: { topic: string; partitions: { partition: number; leader: number; replicas: { id: number }[] }[] }[] };
  const t = listed.topics.find((x) => x.topic === topic);
  return (t?.partitions ?? []).map((p) => ({ partitionId: p.partition, leader: p.leader, replicas: p.replicas.map((r) => r.id) })).sort((a, b) => a.partitionId - b.partitionId);
}
