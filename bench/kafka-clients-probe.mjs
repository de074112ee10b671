// Probe of Kafka clients on a three-broker cluster (bench/README.md, "Kafka clients"): the leader-move loss
// (kafkajs#1303) and a produce/consume run. Not part of the project's dependencies: @platformatic/kafka is installed in
// a scratch directory, run from there:
//   mkdir /tmp/probe && cd /tmp/probe && npm init -y && npm i @platformatic/kafka
//   node <checkout>/bench/kafka-clients-probe.mjs BROKERS move|throughput CLIENT   (kafkajs | kafkajs-acked | platformatic)
// kafkajs: idempotent (IDEMP=0: not), MIF=5 requests in flight; kafkajs-acked: with pipeline/runtime/kafkajs-acked-send.ts.
// throughput: INFLIGHT=4 produce calls at once (1: one at a time, as Trawl's KafkaBus sends); kafkajs runs need no scratch
// directory.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
const require = createRequire(import.meta.url);
const { Kafka, Partitioners, logLevel } = require("kafkajs");
const [brokersArg, what, client] = process.argv.slice(2);
const scratch = createRequire(join(process.cwd(), "package.json"));
const { Producer, Consumer, MessagesStreamModes, stringSerializers, stringDeserializers, compatibilityPartitioner } = client === "platformatic" ? await import(pathToFileURL(scratch.resolve("@platformatic/kafka")).href) : {};

const brokers = brokersArg.split(",");
const kafka = new Kafka({ clientId: "probe", brokers, logLevel: logLevel.NOTHING, retry: { initialRetryTime: 200, retries: 8 } });
const admin = kafka.admin();
await admin.connect();

async function acked() { return import(new URL("../pipeline/runtime/kafkajs-acked-send.ts", import.meta.url).href); }

/** A producer for CLIENT: send(records [{topic, partition, key, value}]) resolves when the client says all were written. */
async function makeProducer() {
  if (client === "platformatic") {
    const p = new Producer({ clientId: "probe-p", bootstrapBrokers: brokers, serializers: stringSerializers, idempotent: true, acks: -1, partitioner: compatibilityPartitioner });
    return { send: (records) => p.send({ messages: records }), close: () => p.close() };
  }
  const chosen = new WeakMap();
  const { recordingPartitioner, sendBatchAcknowledged } = client === "kafkajs-acked" ? await acked() : {};
  const p = kafka.producer({ idempotent: process.env.IDEMP !== "0", maxInFlightRequests: Number(process.env.MIF ?? 5), createPartitioner: recordingPartitioner ? recordingPartitioner(chosen) : Partitioners.DefaultPartitioner });
  await p.connect();
  const send = (records) => {
    const byTopic = new Map();
    for (const r of records) byTopic.set(r.topic, [...(byTopic.get(r.topic) ?? []), { partition: r.partition, key: r.key, value: r.value }]);
    const batch = { acks: -1, topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })) };
    return sendBatchAcknowledged ? sendBatchAcknowledged(p, batch, chosen) : p.sendBatch(batch);
  };
  return { send, close: () => p.disconnect() };
}

/** An admin call, again while a broker has not learnt of a new topic yet (a harness race, not the client's). */
async function again(fn) {
  for (let i = 0; ; i++) { try { return await fn(); } catch (e) { if (i > 50) throw e; await new Promise((r) => setTimeout(r, 200)); } }
}
async function partitions(topic) {
  return again(async () => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.sort((a, b) => a.partitionId - b.partitionId));
}

async function move() {
  const topic = `probe.move.${randomBytes(4).toString("hex")}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 3 }], waitForLeaders: false });
  await again(async () => { const ps = await partitions(topic); if (!(ps.length === 2 && ps.every((p) => p.leader >= 0))) throw new Error("no leaders yet"); });
  const [p0, p1] = await partitions(topic);
  const producer = await makeProducer();
  const rec = (partition, i) => ({ topic, partition, key: `k${partition}-${i}`, value: `v${i}` });
  await producer.send([rec(0, 0), rec(1, 0)]);
  await again(() => admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 1, replicas: [p0.leader, ...p1.replicas.filter((r) => r !== p0.leader && r !== p1.leader)] }] }] }));
  await again(async () => { const [, m] = await partitions(topic); const pend = await admin.listPartitionReassignments({ topics: [{ topic, partitions: [1] }] }); if (!(m.leader === p0.leader && pend.topics.length === 0)) throw new Error("not moved yet"); });
  let error = "";
  try { await producer.send(Array.from({ length: 10 }, (_, i) => [rec(0, i + 1), rec(1, i + 1)]).flat()); } catch (e) { error = e.message; }
  const offsets = (await again(() => admin.fetchTopicOffsets(topic))).sort((a, b) => a.partition - b.partition).map((o) => Number(o.high));
  console.log(JSON.stringify({ client, what, leaders: [p0.leader, p1.leader], stored: offsets, expected: [11, 11], error }));
  await producer.close();
  await again(() => admin.deleteTopics({ topics: [topic] }));
}

async function throughput() {
  const N = Number(process.env.N ?? 50000), BATCH = 500, SIZE = 1024, PARTS = 6;
  const topic = `probe.tp.${randomBytes(4).toString("hex")}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTS, replicationFactor: 3 }], waitForLeaders: false });
  await again(async () => { const ps = await partitions(topic); if (!(ps.length === PARTS && ps.every((p) => p.leader >= 0))) throw new Error("no leaders yet"); });
  const producer = await makeProducer();
  const value = randomBytes(SIZE / 2).toString("hex");
  let cpu = process.cpuUsage(), t = performance.now();
  // a few sends in flight at once, as Trawl's stages have
  const inflight = Number(process.env.INFLIGHT ?? 4);
  let next = 0;
  await Promise.all(Array.from({ length: inflight }, async () => {
    while (next < N) {
      const from = next; next += BATCH;
      await producer.send(Array.from({ length: Math.min(BATCH, N - from) }, (_, i) => ({ topic, key: `key-${from + i}`, value })));
    }
  }));
  const produceMs = performance.now() - t, produceCpu = process.cpuUsage(cpu);
  await producer.close();
  const stored = (await admin.fetchTopicOffsets(topic)).reduce((n, o) => n + Number(o.high), 0);
  cpu = process.cpuUsage(); t = performance.now();
  let got = 0;
  if (client === "platformatic") {
    const c = new Consumer({ groupId: `probe-${topic}`, clientId: "probe-c", bootstrapBrokers: brokers, deserializers: stringDeserializers, maxWaitTime: 100 });
    const stream = await c.consume({ topics: [topic], mode: MessagesStreamModes.EARLIEST, autocommit: 250 });
    await new Promise((resolve) => stream.on("data", () => { if (++got >= N) resolve(); }));
    await stream.close(); await c.close();
  } else {
    const c = kafka.consumer({ groupId: `probe-${topic}`, maxWaitTimeInMs: 100 });
    await c.connect(); await c.subscribe({ topic, fromBeginning: true });
    await new Promise((resolve) => c.run({ eachBatch: async ({ batch }) => { got += batch.messages.length; if (got >= N) resolve(); } }));
    await c.disconnect();
  }
  const consumeMs = performance.now() - t, consumeCpu = process.cpuUsage(cpu);
  const ms = (u) => Math.round((u.user + u.system) / 1000);
  console.log(JSON.stringify({ client, idempotent: process.env.IDEMP !== "0", mif: Number(process.env.MIF ?? 5), inflight, what, records: N, stored, produce: { ms: Math.round(produceMs), cpuMs: ms(produceCpu), perSec: Math.round(N / produceMs * 1000) }, consume: { ms: Math.round(consumeMs), cpuMs: ms(consumeCpu), perSec: Math.round(N / consumeMs * 1000) } }));
  await again(() => admin.deleteTopics({ topics: [topic] }));
}

await (what === "move" ? move() : throughput());
await admin.disconnect();
