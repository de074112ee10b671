// CPU of Trawl's Kafka bus: N records of ~1 KB produced through KafkaBus (calls of 100, 4 at once, KAFKA_COMPRESSION
// zstd) and consumed by startRunner (parallel mode) in this process, against KAFKA_BROKERS. ROOT: the checkout whose
// modules are measured (default this one), so that two versions compare on the same machine:
//   cd <checkout> && ROOT=$PWD N=50000 npx node bench/kafka-bus-cpu.ts
import { randomBytes } from "node:crypto";
const ROOT = process.env.ROOT ?? new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const N = Number(process.env.N ?? 50000);
const { createKafka, ensureTopics, KafkaBus } = await import(`${ROOT}/pipeline/runtime/kafka-bus.ts`);
const { startRunner } = await import(`${ROOT}/pipeline/runtime/runner.ts`);
const { loadConfig } = await import(`${ROOT}/pipeline/runtime/config.ts`);
const { createLogger } = await import(`${ROOT}/pipeline/runtime/logger.ts`);
const tag = `b${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const config = loadConfig({ ...process.env, KAFKA_COMPRESSION: process.env.KAFKA_COMPRESSION ?? "zstd" }, { topicPrefix: `${tag}.`, groupPrefix: `${tag}.`, topicPartitions: 6 });
const log = createLogger("error");
const kafka = createKafka(config, "bus-cpu", log);
await ensureTopics(kafka, config, log);
const bus = new KafkaBus(kafka, config.topicPrefix, undefined, { lingerMs: 5, compression: config.kafkaCompression });
const html = "<p>" + "x".repeat(900) + "</p>";
const cpu0 = process.cpuUsage();
const t0 = Date.now();
let sent = 0;
async function producer() {
  while (sent < N) {
    const from = sent;
    sent += 100;
    await bus.produce(Array.from({ length: 100 }, (_, i) => ({ topic: "team.admission", key: `team-${(from + i) % 97}`, value: { type: "JobQueued", teamId: `team-${(from + i) % 97}`, crawlId: `c${from + i}-${html}`, at: Date.now() } })));
  }
}
await Promise.all([producer(), producer(), producer(), producer()]);
const cpu1 = process.cpuUsage(cpu0);
const t1 = Date.now();
let handled = 0;
const runner = await startRunner({ kafka, bus, config, log }, {
  name: "bench", topic: "team.admission", schema: "team-admission", group: "bench", mode: "parallel", concurrency: 50, broadcast: false,
  createBatch() {},
  async handle() { handled++; return []; },
});
const cpu2s = process.cpuUsage();
const t2 = Date.now();
while (handled < N) await new Promise((r) => setTimeout(r, 20));
const cpu2 = process.cpuUsage(cpu2s);
const t3 = Date.now();
await runner.stop();
await bus.close();
const ms = (u: { user: number; system: number }) => Math.round((u.user + u.system) / 1000);
console.log(JSON.stringify({ root: ROOT, n: N, produceCpuMs: ms(cpu1), produceWallMs: t1 - t0, consumeCpuMs: ms(cpu2), consumeWallMs: t3 - t2, handled }));
process.exit(0);
