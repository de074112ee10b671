// convert stage: pages.fetched -> LinksDiscovered (phase 0, acked first) -> crawl.pages (phase 1), or pages.extract
// (phase 1) when the page's formats ask for json or summary: only those pages go through the extract-json stage.
import type { CrawlPage, FrontierInboxMessage, PageExtract, PageFetched } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage } from "../runtime/errors.ts";
import { keys } from "../topology.ts";
import { pageConverter, type Converter } from "./converter.ts";
import type { ConvertPool } from "./worker-pool.ts";
import type { Metrics } from "../runtime/metrics.ts";
import { addLockdownCredits, extractSpec, markHttpError, wantsExtraction, type PageAnalyzer } from "./document.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";

/** The anchor's throttling marks: the job waited for a slot of its team's concurrency limit before it started. */
export const CONCURRENCY_WARNING = "This scrape job was throttled at your team's concurrency limit: it waited for a slot before it started.";

function markConcurrencyLimited(document: CrawlPage["document"], options: PageFetched["options"]): void {
  const q = options.teamQueue;
  if (!q?.limited || q.admittedAt === undefined) return;
  document.metadata.concurrencyLimited = true;
  document.metadata.concurrencyQueueDurationMs = Math.max(0, q.admittedAt - q.queuedAt);
  document.warning = document.warning ? `${CONCURRENCY_WARNING} ${document.warning}` : CONCURRENCY_WARNING;
}

/** Pages a convert process handles at once per worker thread (or on its main thread without a pool). */
const PAGES_IN_FLIGHT_PER_WORKER = 8;

export class ConvertProcessor extends DeclaredProcessor implements Processor<PageFetched, void> {
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly convert: Converter;
  private readonly metrics: Metrics | undefined;

  /** With a pool, pages convert in worker threads (as many at once as it has workers), each under a time limit.
   * metrics: pages converted by outcome. */
  constructor(pool: ConvertPool | null = null, workers = 1, metrics?: Metrics, analyze?: PageAnalyzer) {
    super("convert");
    this.convert = pageConverter(pool, analyze);
    this.metrics = metrics;
    // pages in flight per worker: while one converts, the others' documents are on their way to the bus (a Kafka
    // produce round trip is several conversions long: one page at a time per worker left the worker idle most of
    // the time and capped a cluster crawl at ~80 pages/s); the pool queues what its workers cannot take yet
    this.concurrency = (pool ? workers : 1) * PAGES_IN_FLIGHT_PER_WORKER;
  }

  createBatch(): void {}

  async handle(msg: Consumed<PageFetched>): Promise<Emission[]> {
    const page = msg.value;
    const bytes = page.bodyBase64 === undefined ? undefined : Buffer.from(page.bodyBase64, "base64");
    const converted = markHttpError(await this.convert({ ...page, ...(bytes ? { bytes } : {}) }, page.options), page.statusCode);
    addLockdownCredits(converted, page.options);
    const { document, links, credits, extractMarkdown, analysis } = converted;
    markConcurrencyLimited(document, page.options);
    const out: Emission[] = [];
    // a batch scrape follows no link: its pages' links are not sent to the frontier
    if (links.length > 0 && page.options.kind !== "batch") {
      const discovered: FrontierInboxMessage = { type: "LinksDiscovered", crawlId: page.crawlId, urlKey: page.urlKey, url: page.finalUrl, depth: page.depth, links };
      out.push({ topic: "frontier.inbox", key: keys.crawl(page.crawlId), value: discovered, phase: 0 });
    }
    const crawlPage: CrawlPage = {
      crawlId: page.crawlId, ...(page.teamId ? { teamId: page.teamId } : {}), urlKey: page.urlKey, credits, document, ...(page.finalUrlKey ? { finalUrlKey: page.finalUrlKey } : {}), ...(page.options.kind === "batch" ? { kind: "batch" as const } : {}),
    };
    const formats = page.options.formats;
    if (wantsExtraction(formats)) {
      const extract: PageExtract = {
        ...crawlPage,
        // the page analyzer's result (the rules provider's json) replaces the HTML it was computed from
        ...(analysis ? { rules: analysis as unknown as NonNullable<PageExtract["rules"]> } : { html: page.body }),
        ...(extractMarkdown !== undefined ? { markdown: extractMarkdown } : {}),
        extract: extractSpec(page.options),
      };
      out.push({ topic: "pages.extract", key: keys.crawlUrl(page.crawlId, page.urlKey), value: extract, phase: 1 });
    } else out.push({ topic: "crawl.pages", key: keys.crawl(page.crawlId), value: crawlPage, phase: 1 });
    this.metrics?.pagesConverted.inc({ outcome: "ok" });
    return out;
  }

  onPageFailure(msg: Consumed<PageFetched>, err: unknown): Emission[] {
    this.metrics?.pagesConverted.inc({ outcome: errorCode(err) });
    const failed: FrontierInboxMessage = {
      type: "PageFailed", crawlId: msg.value.crawlId, urlKey: msg.value.urlKey, url: msg.value.url, code: errorCode(err), error: errorMessage(err),
    };
    return [{ topic: "frontier.inbox", key: keys.crawl(msg.value.crawlId), value: failed }];
  }
}
