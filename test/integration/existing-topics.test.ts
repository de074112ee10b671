// A start on a Kafka where some of Trawl's topics already exist with fewer partitions than KAFKA_PARTITIONS asks
// (created by hand, or before the variable was raised): the missing topics are created with KAFKA_PARTITIONS, the
// existing ones are left as they are, and each short one is named in a warning (a role's replicas beyond its topic's
// partitions would sit idle without anyone being told).
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { awaitLeaders, createKafka, ensureTopics } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";
import { warningsLogger } from "./warnings-logger.ts";

const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 3 });
const kafka = createKafka(config, "existing-topics-test", createLogger("error"));
const admin = kafka.admin();

afterAll(async () => {
  const mine = (await admin.listTopics()).filter((t) => t.startsWith(`${tag}.`));
  if (mine.length > 0) await admin.deleteTopics({ topics: mine });
  await admin.close();
}, 60_000);

it("creates the missing topics with KAFKA_PARTITIONS and warns about an existing one with fewer, leaving it as it is", async () => {
  const short = physicalTopic(config.topicPrefix, "crawl.pages");
  await admin.createTopics({ topics: [short], partitions: 1, replicas: 1 });
  await awaitLeaders(admin, [short]);

  const { log, warnings } = warningsLogger();
  await ensureTopics(kafka, config, log);

  const partitionsOf = async (topic: string) => (await admin.metadata({ topics: [topic], forceUpdate: true })).topics.get(topic)?.partitionsCount;
  expect(await partitionsOf(short)).toBe(1);
  expect(await partitionsOf(physicalTopic(config.topicPrefix, "fetch.tasks"))).toBe(3);
  expect(warnings.filter((w) => w.includes("KAFKA_PARTITIONS"))).toEqual([
    `topic ${short} exists with 1 partition, fewer than KAFKA_PARTITIONS asks (3): at most 1 replica of the role reading it share its work; Trawl does not change existing topics (kafka-topics.sh --alter --partitions 3, while no crawl runs: docs/operations.md)`,
  ]);

  // a second start finds every topic: the one warning again, nothing created
  warnings.length = 0;
  await ensureTopics(kafka, config, log);
  expect(warnings.filter((w) => w.includes("KAFKA_PARTITIONS"))).toHaveLength(1);
}, 60_000);
