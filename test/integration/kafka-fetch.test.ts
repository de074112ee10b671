// How a consume loop fetches on a real broker. A sparse loop (topology.ts: render, webhook deliveries and retries, extract
// jobs, team admission) asks Kafka about once per KAFKA_SPARSE_FETCH_MAX_WAIT_MS while its topic is empty, and its fetch
// is answered by the first message that arrives; a bulk loop polls every KAFKA_FETCH_MAX_WAIT_MS and waits for
// KAFKA_FETCH_MIN_BYTES. The fetch requests are counted with kafkajs' own request events on the real consumers.
import { randomBytes } from "node:crypto";
import type { Kafka } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Consumed, Processor } from "../../pipeline/runtime/bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";

const SPARSE_WAIT_MS = 3000;
const BULK_WAIT_MS = 100;

/** The Kafka client, with every consumer it makes counting its Fetch requests under its group id. */
function countingFetches(kafka: Kafka, fetches: Map<string, number>): Kafka {
  return new Proxy(kafka, {
    get(target, prop, receiver) {
      if (prop !== "consumer") return Reflect.get(target, prop, receiver);
      return (cfg: Parameters<Kafka["consumer"]>[0]) => {
        const consumer = target.consumer(cfg);
        consumer.on(consumer.events.REQUEST, ({ payload }) => {
          if (payload.apiName === "Fetch") fetches.set(cfg.groupId, (fetches.get(cfg.groupId) ?? 0) + 1);
        });
        return consumer;
      };
    },
  });
}

describe("consume loops' fetches (cluster mode)", () => {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger("error");
  const fetches = new Map<string, number>();
  const handled: { group: string; crawlId: string; at: number }[] = [];
  let config: Config;
  let bus: KafkaBus;
  const runners: RunnerHandle[] = [];

  const loop = (group: string, sparse: boolean): Processor<TeamAdmissionMessage> => ({
    name: group, topic: "team.admission", schema: "team-admission", group, mode: "ordered", concurrency: 1, broadcast: false, sparse,
    createBatch() {},
    async handle(msg: Consumed<TeamAdmissionMessage>) {
      handled.push({ group, crawlId: msg.value.crawlId, at: Date.now() });
      return [];
    },
  });

  beforeAll(async () => {
    config = loadConfig(
      { ...process.env, KAFKA_SPARSE_FETCH_MAX_WAIT_MS: String(SPARSE_WAIT_MS), KAFKA_FETCH_MAX_WAIT_MS: String(BULK_WAIT_MS) },
      { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 },
    );
    const kafka = countingFetches(createKafka(config, "fetch-test", log), fetches);
    await ensureTopics(kafka, config, log);
    bus = new KafkaBus(kafka, config.topicPrefix);
    runners.push(await startRunner({ kafka, bus, config, log }, loop("sparse", true)));
    runners.push(await startRunner({ kafka, bus, config, log }, loop("bulk", false)));
  });
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await bus?.close();
  });

  it("an idle sparse loop asks the broker once per sparse wait, a bulk one every fetch wait", async () => {
    // both have joined their groups and are polling an empty topic
    await new Promise((r) => setTimeout(r, 1500));
    const before = { sparse: fetches.get(`${tag}.sparse`) ?? 0, bulk: fetches.get(`${tag}.bulk`) ?? 0 };
    await new Promise((r) => setTimeout(r, 6000));
    const sparse = (fetches.get(`${tag}.sparse`) ?? 0) - before.sparse;
    const bulk = (fetches.get(`${tag}.bulk`) ?? 0) - before.bulk;
    expect(sparse).toBeGreaterThanOrEqual(1);
    expect(sparse).toBeLessThanOrEqual(3); // 6 s / 3 s, plus one in flight at either end
    expect(bulk).toBeGreaterThanOrEqual(20); // 6 s / 100 ms is 60: far more than the sparse loop even on a loaded machine
  });

  it("a sparse loop's fetch is answered by the first message, not at the end of its wait", async () => {
    // produce 300 ms into a sparse fetch: right after one came back, the loop sent the next, which waits up to 3 s
    const sparseGroup = `${tag}.sparse`;
    const seenFetches = fetches.get(sparseGroup) ?? 0;
    while ((fetches.get(sparseGroup) ?? 0) === seenFetches) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 300));
    const crawlId = `c-${tag}`;
    const sent = Date.now();
    await bus.produce([{ topic: "team.admission", key: "team-1", value: { type: "JobQueued", teamId: "team-1", crawlId, at: sent } }]);
    const end = sent + 10_000;
    while (handled.filter((h) => h.crawlId === crawlId).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const seen = handled.filter((h) => h.crawlId === crawlId);
    expect(seen.map((h) => h.group).sort()).toEqual(["bulk", "sparse"]); // each loop is its own group: both get it
    // answered at once; a fetch that waited for bytes would have come back ~2.7 s after the message
    const bySparse = (seen.find((h) => h.group === "sparse")?.at ?? Infinity) - sent;
    expect(bySparse).toBeLessThan(1000);
  });
});
