// Every key lands where the Java client (and librdkafka's murmur2_random, and Trawl's previous client) puts it: Trawl's
// producer on a real broker, read back with kcat, against javaPartition (java-partitioner.ts). A rolling upgrade or a
// mixed deployment keeps each crawl's messages on one partition.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { physicalTopic } from "../../pipeline/topology.ts";

const run = promisify(execFile);
const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 7 });
const log = createLogger("error");
const kafka = createKafka(config, "partitioner-test", log);
const bus = new KafkaBus(kafka, config.topicPrefix);
afterAll(async () => {
  await bus.close();
});

it("puts every key on the partition the Java client gives it", async () => {
  await ensureTopics(kafka, config, log);
  const keys = Array.from({ length: 300 }, (_, i) => `${randomBytes(8).toString("base64url")}-${i}`);
  await bus.produce(keys.map((key) => ({ topic: "frontier.inbox" as const, key, value: { key } })));
  const topic = physicalTopic(config.topicPrefix, "frontier.inbox");
  const { stdout } = await run("kcat", ["-b", config.kafkaBrokers, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%p %k\\n"]);
  const stored = stdout.split("\n").filter(Boolean).map((line) => line.split(" ") as [string, string]);
  expect(stored).toHaveLength(keys.length);
  const wrong = stored.filter(([p, key]) => Number(p) !== javaPartition(key, 7));
  expect(wrong).toEqual([]);
  expect(new Set(stored.map(([p]) => p)).size).toBe(7);
}, 60_000);
