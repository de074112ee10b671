// Crawl events fanned out inside one API process: the api-events consumer (every replica gets every event of
// crawl.events) publishes, WebSocket connections subscribe per crawl.
import type { CrawlEvent } from "../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../pipeline/runtime/bus.ts";
import { DeclaredProcessor } from "../pipeline/runtime/declared-processor.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { needsStoredDocument, storedDocuments, withStoredDocument } from "../pipeline/store/page-event-document.ts";

type Listener = (e: CrawlEvent) => void;

/**
 * The start of a page event as the sink writes it (`jsonWith`: crawlId, teamId, type, then the rest): the top-level
 * type is crawl.page. Any other layout does not match and is decoded as usual.
 */
const PAGE_EVENT = /^\{"crawlId":"([^"\\]*)",(?:"teamId":"[^"\\]*",)?"type":"crawl\.page"/;

export class EventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly everyEvent = new Set<Listener>();

  /** Every event of every crawl (e.g. the status cache drops a crawl's answers when it ends). */
  onEvent(fn: Listener): void {
    this.everyEvent.add(fn);
  }

  /** Whether a WebSocket of this process watches the crawl. */
  watched(crawlId: string): boolean {
    return this.listeners.has(crawlId);
  }

  subscribe(crawlId: string, fn: Listener): () => void {
    const set = this.listeners.get(crawlId) ?? new Set<Listener>();
    set.add(fn);
    this.listeners.set(crawlId, set);
    return () => {
      set.delete(fn);
      if (set.size === 0) this.listeners.delete(crawlId);
    };
  }

  publish(e: CrawlEvent): void {
    for (const fn of this.everyEvent) fn(e);
    for (const fn of this.listeners.get(e.crawlId) ?? []) fn(e);
  }
}

/** The stored documents of a batch's page events without one (CRAWL_EVENTS_DOCUMENT=false) that this process's watchers wait for. */
interface Batch {
  docs: Map<string, string>;
}

export class ApiEventsProcessor extends DeclaredProcessor implements Processor<CrawlEvent, Batch> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly hub: EventHub;
  private readonly store: CrawlStore | undefined;

  /** store: where a page event without its document (CRAWL_EVENTS_DOCUMENT=false) finds it for this process's watchers */
  constructor(hub: EventHub, store?: CrawlStore) {
    super("api-events");
    this.hub = hub;
    this.store = store;
  }

  createBatch(): Batch {
    return { docs: new Map() };
  }

  /**
   * A page event of a crawl no WebSocket here watches: only watchers use page events (every-event listeners want the
   * ends of crawls), and decoding one means parsing and validating its whole document. A watcher that subscribes
   * later reads the stored documents first, and the sink stores a document before its event.
   */
  skip(_key: string | null, text: string | null): boolean {
    const crawlId = text === null ? undefined : PAGE_EVENT.exec(text)?.[1];
    return crawlId !== undefined && !this.hub.watched(crawlId);
  }

  /** The documents of the batch's page events without one that watchers here wait for: one read per crawl. */
  async prepare(messages: Consumed<CrawlEvent>[], batch: Batch): Promise<void> {
    const wanted = messages.map((m) => m.value).filter((e) => needsStoredDocument(e) && this.hub.watched(e.crawlId));
    if (this.store && wanted.length) batch.docs = await storedDocuments(this.store, wanted);
  }

  async handle(msg: Consumed<CrawlEvent>, batch?: Batch): Promise<Emission[]> {
    const e = msg.value;
    // watchers send a document frame per page: a page event without its document gets the stored one
    const event = this.store && needsStoredDocument(e) && this.hub.watched(e.crawlId) ? await withStoredDocument(this.store, e, batch?.docs) : e;
    this.hub.publish(event ?? e);
    return [];
  }
}
