// Crawl events fanned out inside one API process: the api-events consumer (every replica gets every event of
// crawl.events) publishes, WebSocket connections subscribe per crawl.
import type { CrawlEvent } from "../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../pipeline/runtime/bus.ts";
import { DeclaredProcessor } from "../pipeline/runtime/declared-processor.ts";

type Listener = (e: CrawlEvent) => void;

export class EventHub {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly everyEvent = new Set<Listener>();

  /** Every event of every crawl (e.g. the status cache drops a crawl's answers when it ends). */
  onEvent(fn: Listener): void {
    this.everyEvent.add(fn);
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

export class ApiEventsProcessor extends DeclaredProcessor implements Processor<CrawlEvent, void> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly hub: EventHub;

  constructor(hub: EventHub) {
    super("api-events");
    this.hub = hub;
  }

  createBatch(): void {}

  async handle(msg: Consumed<CrawlEvent>): Promise<Emission[]> {
    this.hub.publish(msg.value);
    return [];
  }
}
