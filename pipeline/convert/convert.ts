// convert stage: pages.fetched -> LinksDiscovered (phase 0, acked first) -> crawl.pages (phase 1).
import type { CrawlPage, FrontierInboxMessage, PageFetched } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage } from "../runtime/errors.ts";
import { keys, processorIdentity } from "../topology.ts";
import { pageConverter, type Converter } from "./converter.ts";
import type { ConvertPool } from "./worker-pool.ts";

/** Topic, schema and consumer group as pipeline/topology.ts declares them. */
const ID = processorIdentity("convert");

export class ConvertProcessor implements Processor<PageFetched, void> {
  readonly name = ID.name;
  readonly topic = ID.topic;
  readonly schema = ID.schema;
  readonly group = ID.group;
  readonly broadcast = ID.broadcast;
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly convert: Converter;

  /** With a pool, pages convert in worker threads (as many at once as it has workers), each under a time limit. */
  constructor(pool: ConvertPool | null = null, workers = 1) {
    this.convert = pageConverter(pool);
    this.concurrency = pool ? workers : 1;
  }

  createBatch(): void {}

  async handle(msg: Consumed<PageFetched>): Promise<Emission[]> {
    const page = msg.value;
    const bytes = page.bodyBase64 === undefined ? undefined : Buffer.from(page.bodyBase64, "base64");
    const { document, links, credits } = await this.convert({ ...page, ...(bytes ? { bytes } : {}) }, page.options);
    const out: Emission[] = [];
    if (links.length > 0) {
      const discovered: FrontierInboxMessage = { type: "LinksDiscovered", crawlId: page.crawlId, urlKey: page.urlKey, url: page.finalUrl, depth: page.depth, links };
      out.push({ topic: "frontier.inbox", key: keys.crawl(page.crawlId), value: discovered, phase: 0 });
    }
    const crawlPage: CrawlPage = { crawlId: page.crawlId, urlKey: page.urlKey, credits, document, ...(page.finalUrlKey ? { finalUrlKey: page.finalUrlKey } : {}) };
    out.push({ topic: "crawl.pages", key: keys.crawl(page.crawlId), value: crawlPage, phase: 1 });
    return out;
  }

  onPageFailure(msg: Consumed<PageFetched>, err: unknown): Emission[] {
    const failed: FrontierInboxMessage = {
      type: "PageFailed", crawlId: msg.value.crawlId, urlKey: msg.value.urlKey, url: msg.value.url, code: errorCode(err), error: errorMessage(err),
    };
    return [{ topic: "frontier.inbox", key: keys.crawl(msg.value.crawlId), value: failed }];
  }
}
