// Prints, per stage, the messages produced and the consumer lag. Dev aid: node scripts/dev/lag.ts
// Connects as Trawl does (KAFKA_BROKERS, KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_*, KAFKA_SSL_*: pipeline/runtime/config.ts).
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";

const config = loadConfig(process.env);
const prefix = config.topicPrefix;
const groupPrefix = config.groupPrefix;
const stages: [string, string][] = [["frontier", "frontier.inbox"], ["fetch-render", "fetch.tasks"], ["convert", "pages.fetched"], ["sink", "crawl.pages"]];
const kafka = createKafka(config, "lag", createLogger("silent"));
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
