// A downstream consumer of Trawl's public topic crawl.pages (one message per stored page, keyed by crawl id, in
// order per crawl; value: JSON matching schemas/crawl-page.schema.json, or the Confluent wire format when Trawl runs
// with SCHEMA_REGISTRY_URL). Run: node docs/examples/consume-crawl-pages.ts
import { SchemaRegistry } from "@kafkajs/confluent-schema-registry";
import { Consumer } from "@platformatic/kafka";

export interface CrawlPageMessage {
  crawlId: string;
  /** the team that owns the crawl ("bypass" with authentication off); absent from messages of older versions */
  teamId?: string;
  urlKey: string;
  credits: number;
  document: { markdown?: string; html?: string; metadata: { sourceURL: string; url: string; statusCode: number; title?: string } };
}

/** Reads crawl.pages from the beginning and hands every page to `onPage` until `stop()` is called. */
export async function consumeCrawlPages(opts: { brokers: string[]; topic: string; groupId: string; registryUrl?: string; onPage: (page: CrawlPageMessage) => void }) {
  // with a registry, decode() reads the schema id of each message, fetches that schema once and validates against it
  const registry = opts.registryUrl ? new SchemaRegistry({ host: opts.registryUrl }) : undefined;
  const consumer = new Consumer({ clientId: "crawl-pages-reader", bootstrapBrokers: opts.brokers, groupId: opts.groupId });
  // from the group's committed offsets, or the beginning of the topic the first time; committed as read
  const stream = await consumer.consume({ topics: [opts.topic], mode: "committed", fallbackMode: "earliest" });
  const reading = (async () => {
    for await (const message of stream) {
      const raw = message.value;
      opts.onPage((registry ? await registry.decode(raw) : JSON.parse(raw.toString("utf8"))) as CrawlPageMessage);
    }
  })();
  return {
    stop: async () => {
      await stream.close();
      await reading;
      await consumer.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const reader = await consumeCrawlPages({
    brokers: (process.env.KAFKA_BROKERS ?? "127.0.0.1:19092").split(","),
    topic: `${process.env.KAFKA_TOPIC_PREFIX ?? "trawl."}crawl.pages`,
    groupId: "my-downstream-service",
    registryUrl: process.env.SCHEMA_REGISTRY_URL || undefined,
    onPage: (p) => console.log(p.crawlId, p.document.metadata.url, p.document.markdown?.length ?? 0),
  });
  process.once("SIGINT", () => void reader.stop());
}
