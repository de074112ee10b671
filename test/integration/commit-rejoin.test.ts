// Offset commits that keep failing make the consumer rejoin (pipeline/runtime/commit-failures.ts), on a real cluster
// of three KRaft nodes (own-infra.ts; the offsets topic has one partition, so its leader coordinates every group): the
// broker that coordinates the group is killed while the partition's leader lives.
// A client that kept committing to the dead coordinator while its fetches went on never moved the committed offset
// again; whichever way the client finds the new coordinator (its own look-up, or the runner's rejoin after failed
// commits), the commits must move again within seconds.
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import type { TeamAdmissionMessage } from "../../schemas/types.ts";
import type { Processor } from "../../pipeline/runtime/bus.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createKafka, KafkaBus } from "../../pipeline/runtime/kafka-bus.ts";
import { committedOffsets } from "../../pipeline/runtime/kafka-admin.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { startRunner, type RunnerHandle } from "../../pipeline/runtime/runner.ts";
import { physicalTopic } from "../../pipeline/topology.ts";
import { startOwnInfra, type OwnInfra } from "./own-infra.ts";

async function until(what: string, cond: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let infra: OwnInfra | undefined;
let runner: RunnerHandle | undefined;
let bus: KafkaBus | undefined;
let ticker: NodeJS.Timeout | undefined;
afterAll(async () => {
  clearInterval(ticker);
  await runner?.stop().catch(() => {});
  await bus?.close().catch(() => {});
  await infra?.stop();
}, 120_000);

it("rejoins when its commits keep failing after the group's coordinator died, and its commits move again", async () => {
  infra = await startOwnInfra({
    services: ["kafka"],
    kafkaNodes: 3,
    kafkaPort: 19270,
    kafkaHeapOpts: "-Xms64m -Xmx256m",
    // every group's coordinator on one broker, and a dead broker fenced (its leaderships moved) after 3 s, not 9
    kafkaProps: { "offsets.topic.num.partitions": "1", "broker.session.timeout.ms": "3000", "broker.heartbeat.interval.ms": "500" },
  });
  const brokers = new Map(infra.kafkaBrokers.split(",").map((b, i) => [i + 1, b]));
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const log = createLogger(process.env.LOG_LEVEL ?? "error");
  const all = infra.kafkaBrokers;
  const boot = createKafka(loadConfig({ ...process.env, KAFKA_BROKERS: all }, {}), "rejoin-admin", log);
  const admin = boot.admin();
  await until("the three brokers", async () => (await admin.metadata({ topics: [], forceUpdate: true }).catch(() => ({ brokers: new Map() }))).brokers.size === 3, 90_000);
  // the offsets topic is made at the first coordinator lookup; its leader coordinates every group
  const group = `${tag}.rejoin`;
  let coordinator = 0;
  await until("the offsets topic", async () => {
    // (the answer comes once the offsets topic exists and its one partition has a leader)
    const [found] = await admin.findCoordinator({ keyType: 0, keys: [group] }).catch(() => []);
    coordinator = found?.nodeId ?? 0;
    return coordinator > 0;
  }, 60_000);
  const survivor = coordinator === 1 ? 2 : 1;
  // the consumed topic lives on the other broker only: fetching goes on when the coordinator dies
  const topic = physicalTopic(`${tag}.`, "team.admission");
  await admin.createTopics({ topics: [topic], partitions: -1, replicas: -1, assignments: [{ partition: 0, brokers: [survivor] }] });
  // (a broker whose metadata has not caught up answers UNKNOWN_TOPIC_OR_PARTITION a moment longer)
  await until("the topic's leader", async () => {
    const meta = await admin.metadata({ topics: [topic], forceUpdate: true }).catch(() => undefined);
    return meta?.topics.get(topic)?.partitions[0]?.leader === survivor;
  }, 30_000);
  await admin.close();

  const config = loadConfig({ ...process.env, KAFKA_BROKERS: all, KAFKA_COMMIT_INTERVAL_MS: "0" }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 1 });
  const kafka = createKafka(config, "rejoin-test", log);
  bus = new KafkaBus(kafka, config.topicPrefix);
  let handled = 0;
  const processor: Processor<TeamAdmissionMessage> = {
    name: "rejoin", topic: "team.admission", schema: "team-admission", group: "rejoin", mode: "ordered", concurrency: 1, broadcast: false, sparse: true,
    createBatch() {},
    async handle() {
      handled++;
      return [];
    },
  };
  let sent = 0;
  const send = () => bus!.produce([{ topic: "team.admission", key: "team-1", value: { type: "JobQueued", teamId: "team-1", crawlId: `c${sent++}`, at: Date.now() } }]);
  const committed = async () => {
    const a = createKafka(loadConfig({ ...process.env, KAFKA_BROKERS: brokers.get(survivor)! }, {}), "rejoin-offsets", log).admin();
    try {
      return Number((await committedOffsets(a, group, topic, [0])).get(0) ?? -1n);
    } catch {
      return -1; // the coordinator is moving
    } finally {
      await a.close();
    }
  };

  runner = await startRunner({ kafka, bus, config, log }, processor);
  for (let i = 0; i < 5; i++) await send();
  await until("the first commits", async () => (await committed()) === 5, 30_000);

  // a message every 300 ms from now on: each batch commits (or fails to)
  ticker = setInterval(() => void send().catch(() => {}), 300);
  await infra.kill9Kafka(coordinator);
  const killedAt = Date.now();
  // the offsets partition moves to the survivor; the consumer's commits reach it once the client found the new
  // coordinator, or once the runner rejoined after 3 failed commits (~10 s). The previous client, without the rejoin,
  // restarted its consumer only once its heartbeat retries ran out: the commits moved again 63.6 s after the kill.
  await until("commits after the kill", async () => (await committed()) >= 15, 30_000);
  console.log(`[commit-rejoin] commits moved again ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the coordinator's kill (${handled} messages handled)`);
  expect(await committed()).toBeGreaterThanOrEqual(15);
}, 240_000);
