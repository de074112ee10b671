// Keyed mode (runtime/lanes.ts) under the consumer group protocol (KIP-848) on a real broker: a member joins and takes
// one of the first member's two partitions. The partition the first member keeps must go on where it was: a message
// its lanes had done past the committed offset (behind one still held) is not handled again. Before, every rebalance
// reset every partition's lanes, and a fetch-render replica joining a crawl fetched hundreds of pages twice
// (bench/replica-churn.ts). The partition that moves is handled again from its committed offset by its new owner
// (at-least-once), as before.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus, type KafkaClients } from "../../pipeline/runtime/kafka-bus.ts";
import { committedOffsets } from "../../pipeline/runtime/kafka-admin.ts";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";
import { heldLanes, until } from "./held-lanes.ts";

const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const log = createLogger("error");
let config: Config;
let kafka: KafkaClients;
let bus: KafkaBus;
const runners: RunnerHandle[] = [];
const { handled, held, hold, processor } = heldLanes();
const committed = async () => {
  const admin = kafka.admin();
  try {
    return [...(await committedOffsets(admin, `${tag}.kept`, `${tag}.team.admission`, [0, 1])).values()].map(Number);
  } finally {
    await admin.close();
  }
};
const times = (id: string) => handled.filter((h) => h === id).length;

beforeAll(async () => {
  config = loadConfig({ ...process.env, KAFKA_COMMIT_INTERVAL_MS: "0", KAFKA_GROUP_PROTOCOL: "consumer" }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 2 });
  kafka = createKafka(config, "lanes-kept-test", log);
  await ensureTopics(kafka, config, log);
  bus = new KafkaBus(kafka, config.topicPrefix);
});
afterAll(async () => {
  for (const release of held.values()) release();
  await Promise.all(runners.map((r) => r.stop()));
  await bus?.close();
});

it("a partition kept through an incremental rebalance does not handle again what its lanes had done", async () => {
  const keys = ["team-1", "team-2", "team-3", "team-4", "team-5", "team-6"];
  const byPartition = [0, 1].map((p) => keys.find((k) => javaPartition(k, 2) === p) as string);
  runners.push(await startRunner({ kafka, bus, config, log }, processor("kept", 100)));
  // on each partition: x<p> (lane x) is held, y<p> (lane y) behind it is done, but the committed offset waits for x<p>
  hold.add("x0");
  hold.add("x1");
  await bus.produce(byPartition.flatMap((key, p) => [`x${p}`, `y${p}`].map((crawlId) => ({ topic: "team.admission", key, value: { type: "JobQueued" as const, teamId: "team-1", crawlId, at: Date.now() } }))));
  await until("x0 and x1 held, y0 and y1 done", () => held.has("x0") && held.has("x1") && times("y0") === 1 && times("y1") === 1);
  expect((await committed()).every((o) => o <= 0)).toBe(true); // nothing past x<p> (-1: nothing committed yet)

  // a second member joins: one partition moves to it (and is handled there from offset 0), the other stays
  hold.clear();
  runners.push(await startRunner({ kafka, bus, config, log }, processor("kept", 100)));
  await until("the moved partition handled by the new member", () => times("y0") + times("y1") >= 3, 40_000);
  // time for the first member to act on its new assignment (before, it reset the kept partition and ran y again)
  await new Promise((r) => setTimeout(r, 2000));
  for (const release of held.values()) release();
  await until("every message committed", async () => (await committed()).every((o) => o === 2), 40_000);
  await new Promise((r) => setTimeout(r, 500));
  expect([times("y0"), times("y1")].sort()).toEqual([1, 2]);
}, 90_000);
