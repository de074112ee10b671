// Frontier adapter: runs the reducer over frontier.inbox, keeps crawl states in memory, persists them to the store.
// Order per batch: produce the fetch tasks and other phase-0 emissions (acked), persist URL states and crawl records,
// produce the terminal events (phase 1), then commit. A crash in between replays the batch: the reducer re-emits
// (harmless duplicates, dropped downstream), and a replayed message that ended a crawl announces the end again.
import type { FrontierInboxMessage } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlStore, ErrorRow, UrlRow } from "../store/crawl-store.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import { reduce, restore, toRecord, type CrawlState } from "./reducer.ts";
import { processorIdentity } from "../topology.ts";

interface Batch {
  urls: UrlRow[];
  errors: ErrorRow[];
  dirty: Set<string>;
}

/** Topic, schema and consumer group as pipeline/topology.ts declares them. */
const ID = processorIdentity("frontier");

export class FrontierProcessor implements Processor<FrontierInboxMessage, Batch> {
  readonly name = ID.name;
  readonly topic = ID.topic;
  readonly schema = ID.schema;
  readonly group = ID.group;
  readonly broadcast = ID.broadcast;
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly states = new PartitionCache<CrawlState>();
  /** Finished crawls stay in memory (oldest evicted first) so that late events need no store read. */
  private readonly maxFinished = 1000;
  private readonly finished: string[] = [];
  private readonly store: CrawlStore;
  private readonly clock: Clock;
  private readonly log: Logger;

  constructor(deps: { store: CrawlStore; clock: Clock; log: Logger }) {
    this.store = deps.store;
    this.clock = deps.clock;
    this.log = deps.log.child({ component: "frontier" });
  }

  createBatch(): Batch {
    return { urls: [], errors: [], dirty: new Set() };
  }

  /** State of a crawl after a restart; null when the frontier never saw it (only the API's version 0 exists). */
  private async load(crawlId: string): Promise<CrawlState | null> {
    const record = await this.store.getCrawl(crawlId);
    if (!record || record.version === 0) return null;
    return restore(record, await this.store.loadUrls(crawlId));
  }

  async handle(msg: Consumed<FrontierInboxMessage>, batch: Batch): Promise<Emission[]> {
    const event = msg.value;
    let state = this.states.get(event.crawlId) ?? null;
    if (!state) state = await this.load(event.crawlId);
    if (!state && event.type !== "CrawlRequested") {
      this.log.warn({ crawlId: event.crawlId, type: event.type, partition: msg.partition, offset: msg.offset }, "event for an unknown crawl ignored");
      return [];
    }
    const { state: next, step } = reduce(state, event, this.clock.now());
    if (!next) return step.emissions;
    if (step.changed || step.urlRows.length > 0) {
      next.version++;
      batch.dirty.add(next.crawlId);
    }
    this.states.set(next.crawlId, msg.partition, next);
    batch.urls.push(...step.urlRows);
    batch.errors.push(...step.errorRows);
    if (step.emissions.some((e) => e.topic === "crawl.events")) {
      this.log.info({ crawlId: next.crawlId, status: next.status, done: next.done, failed: next.failed }, "crawl state changed");
    }
    return step.emissions;
  }

  onPartitionsAssigned(partitions: number[]): void {
    const dropped = this.states.retain(partitions);
    if (dropped) this.log.info({ dropped, partitions }, "crawl states of partitions moved away forgotten");
  }

  /** After phase 0 (fetch tasks, started): persist; phase 1 (crawl.completed, failed, cancelled) follows, so whoever
   * hears of the end finds it in the store. */
  async afterPhase(batch: Batch, phase: number): Promise<void> {
    if (phase === 0) await this.persist(batch);
  }

  private async persist(batch: Batch): Promise<void> {
    const now = this.clock.now();
    const records = [...batch.dirty].flatMap((id) => {
      const s = this.states.get(id);
      return s ? [toRecord(s, now)] : [];
    });
    // three independent, idempotent writes (a retry of all three is harmless): side by side
    await Promise.all([
      batch.urls.length ? this.store.saveUrls(batch.urls) : undefined,
      batch.errors.length ? this.store.insertErrors(batch.errors) : undefined,
      records.length ? this.store.saveCrawls(records) : undefined,
    ]);
    batch.urls = [];
    batch.errors = [];
    batch.dirty.clear();
    // finished crawls leave memory after a while; a late event reloads them (and finds them terminal)
    for (const r of records) {
      if (r.status === "scraping" || this.finished.includes(r.crawlId)) continue;
      this.finished.push(r.crawlId);
      if (this.finished.length > this.maxFinished) this.states.delete(this.finished.shift() as string);
    }
  }
}
