// How long a broker loss stalls Trawl's consume loops (issue 32 item 6): on a cluster of three brokers started with
// `TRAWL_KAFKA_NODES=3 npm run infra -- up kafka` (by these scripts: the broker is killed through its pid file), a
// feeder produces 50 messages a second through Trawl's KafkaBus and two runners (two members of one group, Trawl's
// runner and consumer settings) handle them. After 15 s the broker that is the group's coordinator is killed with
// SIGKILL; it is started again 40 s later. Printed: the longest delay from produce to handling of a message produced
// after the kill (the stall), how long after the kill handling was back under 1 s, and messages never handled.
// usage: TRAWL_INFRA_DIR=… TRAWL_KAFKA_NODES=3 TRAWL_KAFKA_PORT=… TRAWL_KAFKA_CONTROLLER_PORT=… \
//          KAFKA_BROKERS=… [KAFKA_SESSION_TIMEOUT_MS=…] node bench/kafka-broker-loss.ts
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TeamAdmissionMessage } from "../schemas/types.ts";
import type { Consumed, Processor } from "../pipeline/runtime/bus.ts";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus } from "../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { startRunner } from "../pipeline/runtime/runner.ts";

const infraDir = process.env.TRAWL_INFRA_DIR ?? join(import.meta.dirname, "..", ".infra");
const tag = `loss${randomBytes(3).toString("hex")}`;
const config = loadConfig(process.env, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 6 });
const log = createLogger(process.env.LOG_LEVEL ?? "error");
const kafka = createKafka(config, "broker-loss", log);
await ensureTopics(kafka, config, log);
const bus = new KafkaBus(kafka, config.topicPrefix, undefined, { log });

const sentAt = new Map<string, number>();
const handledAt = new Map<string, number>();
const processor: Processor<TeamAdmissionMessage> = {
  name: "loss", topic: "team.admission", schema: "team-admission", group: "loss", mode: "parallel", concurrency: 64, broadcast: false,
  createBatch() {},
  async handle(m: Consumed<TeamAdmissionMessage>) {
    if (!handledAt.has(m.value.crawlId)) handledAt.set(m.value.crawlId, Date.now());
    return [];
  },
};
const runners = [await startRunner({ kafka, bus, config, log }, processor), await startRunner({ kafka, bus, config, log }, processor)];

let n = 0;
let produceFailures = 0;
const feeder = setInterval(() => {
  const crawlId = `m${n++}`;
  sentAt.set(crawlId, Date.now());
  bus.produce([{ topic: "team.admission", key: `team-${n % 24}`, value: { type: "JobQueued", teamId: `team-${n % 24}`, crawlId, at: Date.now() } }]).catch(() => void produceFailures++);
}, 20);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await sleep(15_000);

const admin = kafka.admin();
const metadata = await admin.metadata({ topics: [`${tag}.team.admission`], forceUpdate: true });
const coordinator = (await admin.findCoordinator({ keyType: 0, keys: [`${tag}.loss`] }))[0]?.nodeId;
const leads = metadata.topics.get(`${tag}.team.admission`)?.partitions.filter((p) => p.leader === coordinator).length;
await admin.close();
const pidFile = join(infraDir, "kafka", `node${coordinator}`, "kafka.pid");
const killedAt = Date.now();
process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
console.log(`killed broker ${coordinator} (the group's coordinator, leader of ${leads} of 6 partitions) at +15 s; session ${config.kafkaSessionTimeoutMs} ms`);
await sleep(40_000);
execFileSync("bash", [join(import.meta.dirname, "..", "scripts", "kafka.sh"), "up", String(coordinator)], { stdio: "ignore" });
await sleep(20_000);
clearInterval(feeder);
await sleep(15_000);

const after = [...sentAt].filter(([, at]) => at >= killedAt);
const delays = after.map(([id, at]) => ({ at, delay: (handledAt.get(id) ?? Infinity) - at }));
const stall = Math.max(...delays.map((d) => d.delay));
const lastSlow = Math.max(...delays.filter((d) => d.delay > 1000).map((d) => d.at + d.delay), killedAt);
const before = [...sentAt].filter(([, at]) => at < killedAt).map(([id, at]) => (handledAt.get(id) ?? Infinity) - at).sort((a, b) => a - b);
console.log(JSON.stringify({
  sessionTimeoutMs: config.kafkaSessionTimeoutMs,
  produced: sentAt.size,
  neverHandled: [...sentAt.keys()].filter((id) => !handledAt.has(id)).length,
  produceFailures,
  delayBeforeKillP50Ms: before[Math.floor(before.length / 2)],
  stallMs: stall,
  backUnder1sAfterKillMs: lastSlow - killedAt,
}));
await Promise.all(runners.map((r) => r.stop()));
await bus.close();
