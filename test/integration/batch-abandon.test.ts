// A consumer in the middle of a long batch learns from its heartbeat that the group moved on (a rebalance: another
// member joined, or after a broker loss this member is no longer known) and starts no further message of the batch:
// it rejoins at once. Before, the heartbeat's error was only logged at debug level and the batch ran to its end:
// in the broker-loss run, a fetch-render replica went on for 45 s with a partition the group had given to the other
// replica, and 547 of 817 pages were fetched twice.
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Processor } from "../../pipeline/runtime/bus.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { awaitLeaders, createKafka, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";
import { physicalTopic } from "../../pipeline/topology.ts";

const MESSAGES = 150;
const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
// the classic protocol's eager rebalance: a member joining takes every partition away from the others for a moment
// (with the consumer protocol a member that joins a one-partition topic moves nothing)
const config = loadConfig({ ...process.env, KAFKA_GROUP_PROTOCOL: "classic" }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
const log = createLogger(process.env.LOG_LEVEL ?? "error");
const kafka = createKafka(config, "batch-abandon-test", log);
const bus = new KafkaBus(kafka, config.topicPrefix);
const runners: RunnerHandle[] = [];
afterAll(async () => {
  await Promise.allSettled(runners.map((r) => r.stop()));
  await bus.close();
  const admin = kafka.admin();
  await admin.deleteTopics({ topics: [physicalTopic(config.topicPrefix, "team.admission")] });
  await admin.close();
}, 60_000);

/** A member of the group: handles one message at a time, 100 ms each, and records what it handled. */
function member(handled: Set<string>): Processor<TeamAdmissionMessage> {
  return {
    name: "abandon", topic: "team.admission", schema: "team-admission", group: "abandon", mode: "parallel", concurrency: 1, broadcast: false,
    createBatch() {},
    async handle(msg) {
      handled.add(msg.value.crawlId);
      await new Promise((r) => setTimeout(r, 100));
      return [];
    },
  };
}

it("stops a long batch when a heartbeat says the group is rebalancing, and every message is still handled", async () => {
  const admin = kafka.admin();
  const topic = physicalTopic(config.topicPrefix, "team.admission");
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  await awaitLeaders(admin, [topic]);
  await admin.close();
  // one partition, one batch of 150 messages: 15 s of work for the member that has it
  await bus.produce(Array.from({ length: MESSAGES }, (_, i) => ({ topic: "team.admission" as const, key: "team-1", value: { type: "JobQueued" as const, teamId: "team-1", crawlId: `c${i}`, at: Date.now() } })));
  const first = new Set<string>();
  const second = new Set<string>();
  runners.push(await startRunner({ kafka, bus, config, log }, member(first)));
  const end = Date.now() + 60_000;
  while (first.size < 5 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  // a second member joins: the group rebalances, and its join completes once the first member rejoined
  runners.push(await startRunner({ kafka, bus, config, log }, member(second)));
  const firstAtJoin = first.size;
  // before, the first member rejoined only after its whole batch: it had handled all 150 by then
  expect(firstAtJoin).toBeLessThan(MESSAGES);
  // at-least-once: the rest of the batch is handled after the rebalance, by whichever member has the partition
  while (new Set([...first, ...second]).size < MESSAGES && Date.now() < end + 60_000) await new Promise((r) => setTimeout(r, 100));
  expect(new Set([...first, ...second]).size).toBe(MESSAGES);
  console.log(`[batch-abandon] the first member had handled ${firstAtJoin} of ${MESSAGES} when the second joined`);
}, 180_000);
