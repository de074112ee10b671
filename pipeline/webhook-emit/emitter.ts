// webhook-emit, part 1: crawl.events -> webhook.deliveries. Each event a crawl's webhook wants is handed to delivery
// once (replays of crawl.events are recognised by event id, also after a restart, from the delivery log).
import type { CrawlEvent, WebhookDelivery } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlStore, DeliveryRow } from "../store/crawl-store.ts";
import { keys } from "../topology.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import { eventId, firstDelivery, parseWebhook, wantsPages, type WebhookSetting } from "./payload.ts";
import { needsStoredDocument, storedDocuments, withStoredDocument } from "../store/page-event-document.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";

interface CrawlHooks {
  setting: WebhookSetting | null;
  teamId: string;
  handed: Set<string>;
}

interface Batch {
  handed: DeliveryRow[];
  /** the stored documents of the batch's page events without one (CRAWL_EVENTS_DOCUMENT=false), for page webhooks */
  docs: Map<string, string>;
}

/**
 * One lane per crawl (runtime/lanes.ts): a crawl's events are handed in order, and one crawl's store reads and
 * delivery-log writes never hold another crawl's events (the webhook path measures its latency from an event's
 * emission; one loop per partition in offset order made a burst of new crawls cost every later event of the partition
 * their reads and writes in a row).
 */
export class WebhookEmitter extends DeclaredProcessor implements Processor<CrawlEvent, Batch> {
  readonly mode = "keyed" as const;
  readonly concurrency = 256;
  private readonly crawls = new PartitionCache<CrawlHooks>();
  private readonly deps: { store: CrawlStore; clock: Clock; log: Logger; secret: string };

  constructor(deps: { store: CrawlStore; clock: Clock; log: Logger; secret: string }) {
    super("webhook-emit");
    this.deps = deps;
  }

  createBatch(): Batch {
    return { handed: [], docs: new Map() };
  }

  lane(msg: Consumed<CrawlEvent>): string {
    return msg.value.crawlId;
  }

  onPartitionsAssigned(partitions: number[]): void {
    this.crawls.retain(partitions);
  }

  /**
   * Events of a crawl known to have no webhook are skipped before they are decoded (every page event carries its
   * whole document, and most crawls have no webhook). Only when the event's own crawlId, its first field, is the key:
   * anything else is decoded and handled as usual.
   */
  skip(key: string | null, text: string | null): boolean {
    if (key === null || text === null || this.crawls.get(key)?.setting !== null) return false;
    return text.startsWith(`{"crawlId":${JSON.stringify(key)},`);
  }

  private async hooks(crawlId: string, partition: number): Promise<CrawlHooks> {
    let h = this.crawls.get(crawlId);
    if (!h) {
      const crawl = await this.deps.store.getCrawl(crawlId);
      const setting = crawl ? parseWebhook(crawl.webhook) : null;
      const handed = setting ? new Set((await this.deps.store.listDeliveries(crawlId)).filter((d) => d.attempt === 0).map((d) => d.eventId)) : new Set<string>();
      h = { setting, teamId: crawl?.teamId || TEAM_BYPASS, handed };
      this.crawls.set(crawlId, partition, h);
      if (this.crawls.size > 10_000) this.crawls.delete(this.crawls.oldest() as string);
    }
    return h;
  }

  /** Page events without their document, of crawls whose webhook sends pages: their documents in one read per crawl. */
  async prepare(messages: Consumed<CrawlEvent>[], batch: Batch): Promise<void> {
    const wanted: CrawlEvent[] = [];
    for (const m of messages) {
      if (!needsStoredDocument(m.value)) continue;
      const setting = (await this.hooks(m.value.crawlId, m.partition)).setting;
      if (setting && wantsPages(setting)) wanted.push(m.value);
    }
    if (wanted.length) batch.docs = await storedDocuments(this.deps.store, wanted);
  }

  async handle(msg: Consumed<CrawlEvent>, batch: Batch): Promise<Emission[]> {
    const h = await this.hooks(msg.value.crawlId, msg.partition);
    if (!h.setting) return [];
    const id = eventId(msg.value);
    if (h.handed.has(id)) return [];
    // a page event without its document (CRAWL_EVENTS_DOCUMENT=false): the document as stored, for a webhook that sends pages
    const event = needsStoredDocument(msg.value) && wantsPages(h.setting) ? await withStoredDocument(this.deps.store, msg.value, batch.docs) : msg.value;
    if (!event) return [];
    const delivery: WebhookDelivery | null = firstDelivery(event, h.setting, this.deps.secret, this.deps.clock.now(), h.teamId);
    if (!delivery) return [];
    h.handed.add(id);
    batch.handed.push({ crawlId: event.crawlId, eventId: id, event: event.type, url: delivery.url, statusCode: 0, attempt: 0, error: "", at: this.deps.clock.now() });
    return [{ topic: "webhook.deliveries", key: keys.crawl(event.crawlId), value: delivery }];
  }

  async afterProduce(batch: Batch): Promise<void> {
    if (batch.handed.length) await this.deps.store.logDeliveries(batch.handed);
    batch.handed = [];
  }
}
