// Prints, per stage, the messages produced and the consumer lag. Dev aid: node scripts/dev/lag.ts
// Connects as Trawl does (KAFKA_BROKERS, KAFKA_SECURITY_PROTOCOL, KAFKA_SASL_*, KAFKA_SSL_*: pipeline/runtime/config.ts).
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { committedOffsets, endOffsets, withAdmin } from "../../pipeline/runtime/kafka-admin.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";

const config = loadConfig(process.env);
const prefix = config.topicPrefix;
const groupPrefix = config.groupPrefix;
const stages: [string, string][] = [["frontier", "frontier.inbox"], ["fetch-render", "fetch.tasks"], ["convert", "pages.fetched"], ["sink", "crawl.pages"]];
const kafka = createKafka(config, "lag", createLogger("silent"));
await withAdmin(kafka, async (admin) => {
  for (const [group, topic] of stages) {
    const offsets = await endOffsets(admin, prefix + topic);
    const committed = await committedOffsets(admin, groupPrefix + group, prefix + topic, offsets.map((o) => o.partition));
    let high = 0;
    let lag = 0;
    for (const o of offsets) {
      const c = Number(committed.get(o.partition) ?? 0n);
      high += Number(o.high);
      lag += Number(o.high) - Math.max(0, c);
    }
    console.log(`${group.padEnd(14)} produced ${String(high).padStart(8)}  lag ${lag}`);
  }
});
