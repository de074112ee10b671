// Trawl on three Kafka brokers (scripts/kafka.sh with TRAWL_KAFKA_NODES=3, its own ports): the topics it creates are
// replicated as KAFKA_REPLICATION_FACTOR / KAFKA_MIN_INSYNC_REPLICAS say, and no record is lost when a partition's leader
// moves between two produce calls (the loss the previous client caused, its issue 1303: a partition whose new leader already acknowledged the
// other partitions of the same request was never sent, and the send resolved without an error), a consumer keeps its
// partitions when its group's coordinator moves, and the idempotent producer stores each record once, also when a
// partition's leader is killed while records are produced to it.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Admin } from "@platformatic/kafka";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Processor } from "../../pipeline/runtime/bus.ts";
import { createKafka, ensureTopics, KafkaBus, type KafkaClients } from "../../pipeline/runtime/kafka-bus.ts";
import { committedOffsets } from "../../pipeline/runtime/kafka-admin.ts";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { startRunner } from "../../pipeline/runtime/runner.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";
import { coordinatorPartition, startOwnInfra, type OwnInfra } from "./own-infra.ts";
import { warningsLogger } from "./warnings-logger.ts";
import { again, internalPartitionsOf, partitionsOf, reassign, reassigning, topicConfig } from "./kafka-test-admin.ts";

const run = promisify(execFile);
const log = createLogger("error");

/** Keys the Java partitioner (Trawl's, librdkafka's) sends to `partition` of a two-partition topic. */
function keysFor(partition: number, count: number, tag: string): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < count; i++) {
    const key = `${tag}-${i}`;
    if (javaPartition(key, 2) === partition) keys.push(key);
  }
  return keys;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `partition key` of every record of `topic`, sorted (read with kcat). */
async function storedRecords(topic: string): Promise<string[]> {
  const { stdout } = await run("kcat", ["-b", config.kafkaBrokers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%p %k\\n"]);
  return stdout.split("\n").filter(Boolean).sort();
}

let config: Config;

describe("Kafka with three brokers", () => {
  let infra: OwnInfra;
  let kafka: KafkaClients;
  let admin: Admin;
  beforeAll(async () => {
    infra = await startOwnInfra({ services: ["kafka"], kafkaNodes: 3 });
    const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
    config = loadConfig({ KAFKA_BROKERS: infra.kafkaBrokers }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 2 });
    kafka = createKafka(config, "three-brokers-test", log);
    await ensureTopics(kafka, config, log);
    admin = kafka.admin();
  }, 400_000);
  afterAll(async () => {
    await admin?.close();
    await infra?.stop();
  }, 120_000);

  it("creates Trawl's topics with three replicas, two of them in sync, by default", async () => {
    const topic = physicalTopic(config.topicPrefix, "crawl.pages");
    for (const p of await partitionsOf(admin, topic)) expect(p.replicas).toHaveLength(3);
    expect(await topicConfig(admin, topic, "min.insync.replicas")).toBe("2");
  });

  it("refuses a factor larger than the cluster and warns about factor 1, naming KAFKA_REPLICATION_FACTOR", async () => {
    const over = loadConfig({ KAFKA_BROKERS: infra.kafkaBrokers, KAFKA_REPLICATION_FACTOR: "4" }, { topicPrefix: `${config.topicPrefix}over.` });
    await expect(ensureTopics(createKafka(over, "three-brokers-test", log), over, log)).rejects.toThrow(/KAFKA_REPLICATION_FACTOR=4 is larger than the Kafka cluster \(3 brokers\)/);
    const one = loadConfig({ KAFKA_BROKERS: infra.kafkaBrokers, KAFKA_REPLICATION_FACTOR: "1" }, { topicPrefix: `${config.topicPrefix}one.`, topicPartitions: 1 });
    const w = warningsLogger();
    await ensureTopics(createKafka(one, "three-brokers-test", w.log), one, w.log);
    expect(w.warnings).toContainEqual(expect.stringContaining("KAFKA_REPLICATION_FACTOR=1 on a cluster of 3 brokers"));
  });

  it("stores every record produced to two partitions after one's leader moved onto the other's (no record lost)", async () => {
    const topic = physicalTopic(config.topicPrefix, "crawl.pages");
    const [p0, p1] = await partitionsOf(admin, topic);
    if (!p0 || !p1) throw new Error("the topic has no two partitions");
    // the precondition of the loss: the two partitions are led by different brokers
    expect(p0.leader).not.toBe(p1.leader);
    const bus = new KafkaBus(createKafka(config, "three-brokers-test-producer", log), config.topicPrefix);
    try {
      const [keys0, keys1] = [keysFor(0, 11, "a"), keysFor(1, 11, "b")];
      const emit = (keys: string[]) => keys.map((key, i) => ({ topic: "crawl.pages" as const, key, value: { i, key } }));
      // the producer learns the leaders
      await bus.produce([...emit(keys0.slice(0, 1)), ...emit(keys1.slice(0, 1))]);
      // partition 1's leader moves onto partition 0's: its old leader leaves its replicas
      await again(() => reassign(admin, topic, 1, [p0.leader, ...p1.replicas.filter((r) => r !== p0.leader && r !== p1.leader)]));
      await until("the leader move", async () => {
        const [, moved] = await partitionsOf(admin, topic);
        return moved?.leader === p0.leader && !(await reassigning(admin, topic, 1)) ? true : undefined;
      });
      // ten records to each partition in one produce call: it resolves, so every one of them must be stored
      await bus.produce([...emit(keys0.slice(1)), ...emit(keys1.slice(1))]);
      // every record is in its partition once (read back with kcat, librdkafka: another client than the one under
      // test): the previous client, unchecked, kept only partition 1's first record ([11, 1] of [11, 11]); the producer is
      // idempotent, so a batch sent again is not stored twice
      expect(await storedRecords(topic)).toEqual([...keys0.map((k) => `0 ${k}`), ...keys1.map((k) => `1 ${k}`)].sort());
    } finally {
      await bus.close();
    }
  });

  it("a consumer in a long batch follows its group's coordinator when it moves, and keeps its partitions", async () => {
    const group = "moving";
    const groupId = `${config.groupPrefix}${group}`;
    const bus = new KafkaBus(createKafka(config, "three-brokers-test-moving", log), config.topicPrefix, undefined, { log });
    let joins = 0;
    let started = false;
    let handled = 0;
    let release = () => {};
    const released = new Promise<void>((r) => (release = r));
    const processor: Processor<TeamAdmissionMessage> = {
      name: "moving", topic: "team.admission", schema: "team-admission", group, mode: "parallel", concurrency: 1, broadcast: false,
      createBatch() {},
      onPartitionsAssigned: () => void joins++,
      async handle() {
        started = true;
        await released;
        handled++;
        return [];
      },
    };
    const runner = await startRunner({ kafka: createKafka(config, "three-brokers-test-moving-group", log), bus, config, log }, processor);
    try {
      await bus.produce([{ topic: "team.admission", key: "team-1", value: { type: "JobQueued", teamId: "team-1", crawlId: "c1", at: Date.now() } }]);
      await until("the batch to start", async () => (started ? true : undefined));
      expect(joins).toBe(1);
      // (__consumer_offsets exists once a group has joined)
      const offsetPartitions = await internalPartitionsOf(config.kafkaBrokers, "__consumer_offsets");
      const partition = coordinatorPartition(groupId, offsetPartitions.length);
      // the lead of the group's __consumer_offsets partition leaves its broker: the new leader becomes the coordinator,
      // loads the group with the member's session restarted, and the old one answers "not the correct coordinator"
      const before = offsetPartitions.find((p) => p.partitionId === partition);
      if (!before) throw new Error("no partition of __consumer_offsets for the group");
      await again(() => reassign(admin, "__consumer_offsets", partition, before.replicas.filter((r) => r !== before.leader)));
      await until("the coordinator's move", async () => {
        const [now] = (await internalPartitionsOf(config.kafkaBrokers, "__consumer_offsets")).filter((p) => p.partitionId === partition);
        return now && now.leader !== before.leader && !(await reassigning(admin, "__consumer_offsets", partition)) ? true : undefined;
      });
      // the batch goes on for two sessions after the move: a member that heartbeats only the old coordinator is
      // dropped by the new one after one session, and rejoins once its batch ends (a second assignment)
      await new Promise((r) => setTimeout(r, 2 * config.kafkaSessionTimeoutMs));
      release();
      await until("the message handled", async () => (handled >= 1 ? true : undefined), 30_000);
      // its offset is committed, through the new coordinator
      const topic = physicalTopic(config.topicPrefix, "team.admission");
      await until("the offset committed", async () => {
        const committed = await committedOffsets(admin, groupId, topic, [0, 1]);
        const total = [...committed.values()].reduce((n, o) => n + Math.max(0, Number(o)), 0);
        return total === 1 ? true : undefined;
      }, 10_000);
      await new Promise((r) => setTimeout(r, 2000));
      // a member that went on heartbeating the old coordinator (the previous client, unpatched) was dropped by the new one and
      // rejoined once its batch ended: { joins: 2, handled: 2 }, the message delivered again
      expect({ joins, handled }).toEqual({ joins: 1, handled: 1 });
    } finally {
      release();
      await runner.stop();
      await bus.close();
    }
  }, 180_000);

  // last: it kills a broker (it stays down until afterAll)
  it("stores every record once when the leader of a partition is killed while records are produced to it", async () => {
    const topic = physicalTopic(config.topicPrefix, "crawl.events");
    const [p0] = await partitionsOf(admin, topic);
    if (!p0) throw new Error("the topic has no partition");
    const bus = new KafkaBus(createKafka(config, "three-brokers-test-killed", log), config.topicPrefix);
    const [keys0, keys1] = [keysFor(0, 400, "c"), keysFor(1, 400, "d")];
    const sent: string[] = [];
    try {
      // one produce call after another, each one record to each partition (as a stage's batches), until well after the kill
      let afterKill: number | undefined;
      const producing = (async () => {
        for (let i = 0; i < keys0.length && (afterKill === undefined || afterKill < 20); i++) {
          const killed = afterKill !== undefined;
          await bus.produce([keys0[i]!, keys1[i]!].map((key) => ({ topic: "crawl.events" as const, key, value: { key } })));
          sent.push(`0 ${keys0[i]}`, `1 ${keys1[i]}`);
          if (killed) afterKill = (afterKill ?? 0) + 1;
        }
      })();
      await until("some records", async () => (sent.length >= 40 ? true : undefined));
      await infra.kill9Kafka(p0.leader);
      afterKill = 0;
      await producing;
      expect(afterKill).toBe(20);
      expect(await storedRecords(topic)).toEqual([...sent].sort());
    } finally {
      await bus.close();
    }
  }, 180_000);
});
