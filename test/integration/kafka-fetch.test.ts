// How a consume loop fetches on a real broker. A sparse loop (topology.ts: render, webhook deliveries and retries, extract
// jobs, team admission) never waits for bytes: its fetch is answered by the first message, and an idle one waits up to
// KAFKA_IDLE_FETCH_MAX_WAIT_MS. A bulk loop waits for KAFKA_FETCH_MIN_BYTES or KAFKA_FETCH_MAX_WAIT_MS while messages
// flow, and fetches like a sparse loop after a fetch that brought nothing (runner.ts, fetchFrom). The fetch requests
// are counted on the client's own diagnostics channel (consumerFetchesChannel) of the real consumers.
import { randomBytes } from "node:crypto";
import { consumerFetchesChannel, type Consumer } from "@platformatic/kafka";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Consumed, Processor } from "../../pipeline/runtime/bus.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";

// wide apart, so that what each assertion tells apart survives a loaded machine
const IDLE_WAIT_MS = 4000;
const BULK_WAIT_MS = 1000;

/** Counts the answered Fetch requests of every consumer of this process, by group id. */
function countFetches(fetches: Map<string, number>): () => void {
  const none = () => {};
  const handlers = {
    start: none,
    end: none,
    asyncStart: none,
    error: none,
    asyncEnd(ctx: unknown) {
      const group = ((ctx as { client?: Consumer }).client)?.groupId;
      if (group) fetches.set(group, (fetches.get(group) ?? 0) + 1);
    },
  };
  consumerFetchesChannel.subscribe(handlers);
  return () => consumerFetchesChannel.unsubscribe(handlers);
}

describe("consume loops' fetches (cluster mode)", () => {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger("error");
  const fetches = new Map<string, number>();
  const handled: { group: string; crawlId: string; at: number }[] = [];
  let config: Config;
  let bus: KafkaBus;
  const runners: RunnerHandle[] = [];
  let stopCounting = () => {};

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
      { ...process.env, KAFKA_IDLE_FETCH_MAX_WAIT_MS: String(IDLE_WAIT_MS), KAFKA_FETCH_MAX_WAIT_MS: String(BULK_WAIT_MS), KAFKA_SESSION_TIMEOUT_MS: String(3 * IDLE_WAIT_MS) },
      { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 },
    );
    stopCounting = countFetches(fetches);
    const kafka = createKafka(config, "fetch-test", log);
    await ensureTopics(kafka, config, log);
    bus = new KafkaBus(kafka, config.topicPrefix);
    runners.push(await startRunner({ kafka, bus, config, log }, loop("sparse", true)));
    runners.push(await startRunner({ kafka, bus, config, log }, loop("bulk", false)));
  });
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await bus?.close();
    stopCounting();
  });

  /** Resolves right after the loop of `group` got a fetch response (its next fetch has just been sent). */
  async function afterFetch(group: string): Promise<void> {
    const seen = fetches.get(`${tag}.${group}`) ?? 0;
    while ((fetches.get(`${tag}.${group}`) ?? 0) === seen) await new Promise((r) => setTimeout(r, 5));
  }

  /** Produces one admission message; resolves with when it was sent and when each loop handled it. */
  async function send(crawlId: string): Promise<{ sent: number; sparse: number; bulk: number }> {
    const sent = Date.now();
    await bus.produce([{ topic: "team.admission", key: "team-1", value: { type: "JobQueued", teamId: "team-1", crawlId, at: sent } }]);
    const end = sent + 10_000;
    while (handled.filter((h) => h.crawlId === crawlId).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    const at = (group: string) => handled.find((h) => h.crawlId === crawlId && h.group === group)?.at ?? Infinity;
    return { sent, sparse: at("sparse"), bulk: at("bulk") };
  }

  it("idle loops, sparse or bulk, ask the broker once per idle wait", async () => {
    // both have joined their groups and are polling an empty topic
    await new Promise((r) => setTimeout(r, 2500));
    const before = { sparse: fetches.get(`${tag}.sparse`) ?? 0, bulk: fetches.get(`${tag}.bulk`) ?? 0 };
    await new Promise((r) => setTimeout(r, 8000));
    const sparse = (fetches.get(`${tag}.sparse`) ?? 0) - before.sparse;
    const bulk = (fetches.get(`${tag}.bulk`) ?? 0) - before.bulk;
    expect(sparse).toBeGreaterThanOrEqual(1);
    expect(sparse).toBeLessThanOrEqual(3); // 8 s / 4 s, plus one in flight at either end
    expect(bulk).toBeGreaterThanOrEqual(1);
    expect(bulk).toBeLessThanOrEqual(4); // at the bulk wait of 1 s it would be 8
  });

  it("the first message after a quiet spell answers the waiting fetch of either loop", async () => {
    // 200 ms into the fetches that would otherwise wait 4 s (the bulk one 1 s, without its idle mode)
    await afterFetch("bulk");
    await new Promise((r) => setTimeout(r, 200));
    const { sent, sparse, bulk } = await send(`first-${tag}`);
    expect(sparse - sent).toBeLessThan(BULK_WAIT_MS / 2);
    expect(bulk - sent).toBeLessThan(BULK_WAIT_MS / 2);
  });

  it("while messages flow, a bulk loop waits for bytes again and a sparse one does not", async () => {
    const first = await send(`flow-a-${tag}`);
    expect(first.bulk - first.sent).toBeLessThan(IDLE_WAIT_MS); // the idle fetch answered it
    // that fetch brought a message, so the bulk loop's next one waits for 64 KB or 1 s; the sparse one's does not
    const second = await send(`flow-b-${tag}`);
    expect(second.bulk - second.sent).toBeGreaterThanOrEqual(BULK_WAIT_MS / 2);
    expect(second.sparse).toBeLessThan(second.bulk);
  });
});
