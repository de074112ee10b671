// Prints, per stage, the messages produced and the consumer lag. Dev aid: node scripts/dev/lag.ts
import { Kafka, logLevel } from "kafkajs";

const prefix = process.env.KAFKA_TOPIC_PREFIX ?? "trawl.";
const groupPrefix = process.env.KAFKA_GROUP_PREFIX ?? "trawl.";
const stages: [string, string][] = [["frontier", "frontier.inbox"], ["fetch-render", "fetch.tasks"], ["convert", "pages.fetched"], ["sink", "crawl.pages"]];
const kafka = new Kafka({ brokers: (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(","), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
for (const [group, topic] of stages) {
  const offsets = await admin.fetchTopicOffsets(prefix + topic);
  const committed = (await admin.fetchOffsets({ groupId: groupPrefix + group, topics: [prefix + topic] }))[0]?.partitions ?? [];
  let high = 0;
  let lag = 0;
  for (const o of offsets) {
    const c = Number(committed.find((p) => p.partition === o.partition)?.offset ?? 0);
    high += Number(o.high);
    lag += Number(o.high) - Math.max(0, c);
  }
  console.log(`${group.padEnd(14)} produced ${String(high).padStart(8)}  lag ${lag}`);
}
await admin.disconnect();
