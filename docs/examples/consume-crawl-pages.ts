// A downstream consumer of Trawl's public topic crawl.pages (one message per stored page, keyed by crawl id, in
// order per crawl; value: JSON matching schemas/crawl-page.schema.json). Run: node docs/examples/consume-crawl-pages.ts
import { Kafka, logLevel } from "kafkajs";

export interface CrawlPageMessage {
  crawlId: string;
  urlKey: string;
  credits: number;
  document: { markdown?: string; html?: string; metadata: { sourceURL: string; url: string; statusCode: number; title?: string } };
}

/** Reads crawl.pages from the beginning and hands every page to `onPage` until `stop()` is called. */
export async function consumeCrawlPages(opts: { brokers: string[]; topic: string; groupId: string; onPage: (page: CrawlPageMessage) => void }) {
  const kafka = new Kafka({ clientId: "crawl-pages-reader", brokers: opts.brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: opts.groupId });
  await consumer.connect();
  await consumer.subscribe({ topic: opts.topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const raw = message.value as Buffer;
      // with SCHEMA_REGISTRY_URL the value would start with the Confluent wire-format header (0x00 + schema id)
      const json = raw[0] === 0 ? raw.subarray(5) : raw;
      opts.onPage(JSON.parse(json.toString("utf8")) as CrawlPageMessage);
    },
  });
  return { stop: () => consumer.disconnect() };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const reader = await consumeCrawlPages({
    brokers: (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(","),
    topic: `${process.env.KAFKA_TOPIC_PREFIX ?? "trawl."}crawl.pages`,
    groupId: "my-downstream-service",
    onPage: (p) => console.log(p.crawlId, p.document.metadata.url, p.document.markdown?.length ?? 0),
  });
  process.once("SIGINT", () => void reader.stop());
}
