// sink stage: crawl.pages -> documents in the store (seq = completion order), then crawl.events (page) and PageDone.
// Idempotent: a url key is stored once per crawl; a replay re-announces without writing twice.
import { FingerprintMap, KeySet } from "../store/fingerprint-set.ts";
import type { CrawlEvent, CrawlPage, FrontierInboxMessage } from "../../schemas/index.ts";
import { jsonWith, type Consumed, type Emission, type Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Metrics } from "../runtime/metrics.ts";
import type { Logger } from "../runtime/logger.ts";
import { keys } from "../topology.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import type { CancelCache } from "../store/cancel-cache.ts";
import { documentTokens, type CrawlStore, type DocumentRow } from "../store/crawl-store.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { historyKey, previousSnapshots, trackChanges } from "./track-changes.ts";
import type { Snapshot } from "../store/snapshot-store.ts";
import { changeRecord } from "../store/change-feed.ts";

/** A crawl's cursor unused this long is dropped from memory (it is rebuilt from the store if the crawl goes on). */
export const CURSOR_IDLE_MS = 10 * 60 * 1000;

interface CrawlCursor {
  nextSeq: number;
  usedAt: number;
  /**
   * stored URL keys, with the seq each was stored at (a replay announces its page again under that seq), and where
   * stored pages ended up after redirects: by their fingerprints (at most 24 and 16 bytes a page, issue 48)
   */
  stored: FingerprintMap;
  finals: KeySet;
}

interface Batch {
  rows: DocumentRow[];
  /** url keys written by this batch, per crawl */
  keys: Map<string, Set<string>>;
  finals: Map<string, Set<string>>;
  cancelled: Set<string>;
  /** an insert of this batch failed: it may have been stored anyway */
  uncertain: boolean;
  /** change tracking: the latest snapshot of the batch's pages, by history key */
  previous: Map<string, Snapshot>;
  /** change tracking: the snapshots this batch takes */
  snapshots: Snapshot[];
  /** crawls looked up by a replay in this batch: still running (their stored pages are announced again) or not */
  running: Map<string, boolean>;
}

export class SinkProcessor extends DeclaredProcessor implements Processor<CrawlPage, Batch> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly cursors = new PartitionCache<CrawlCursor>();
  private readonly store: CrawlStore;
  private readonly cancels: CancelCache;
  private readonly clock: Clock;
  private readonly log: Logger;
  private sweptAt = 0;
  private readonly metrics: Metrics | undefined;
  private readonly snapshots: SnapshotStore | undefined;
  private readonly eventDocument: boolean;

  /**
   * metrics: documents by outcome (stored, duplicate, raced, cancelled); snapshots: change tracking's history;
   * eventDocument (CRAWL_EVENTS_DOCUMENT, default true): whether a page event carries its document or only its seq and urlKey
   */
  constructor(deps: { store: CrawlStore; cancels: CancelCache; clock: Clock; log: Logger; metrics?: Metrics; snapshots?: SnapshotStore; eventDocument?: boolean }) {
    super("sink");
    this.eventDocument = deps.eventDocument ?? true;
    this.snapshots = deps.snapshots;
    this.metrics = deps.metrics;
    this.store = deps.store;
    this.cancels = deps.cancels;
    this.clock = deps.clock;
    this.log = deps.log.child({ component: "sink" });
  }

  createBatch(): Batch {
    return { rows: [], keys: new Map(), finals: new Map(), cancelled: new Set(), uncertain: false, previous: new Map(), snapshots: [], running: new Map() };
  }

  private async cursor(crawlId: string, partition: number): Promise<CrawlCursor> {
    const now = this.clock.now();
    let c = this.cursors.get(crawlId);
    if (!c) {
      const { nextSeq, keys: stored, seqs, finalKeys } = await this.store.documentKeys(crawlId);
      // a key stored twice (a replay that raced a rebalance) keeps its first seq: the one reads show
      const first = new FingerprintMap(stored.length);
      stored.forEach((k, i) => first.set(k, Math.min(first.get(k) ?? Infinity, seqs[i] as number)));
      const finals = new KeySet();
      for (const k of finalKeys) finals.add(k);
      c = { nextSeq, usedAt: now, stored: first, finals };
      this.cursors.set(crawlId, partition, c);
    }
    c.usedAt = now;
    return c;
  }

  onPartitionsAssigned(partitions: number[]): void {
    const dropped = this.cursors.retain(partitions);
    if (dropped) this.log.info({ dropped, partitions }, "cursors of partitions moved away forgotten");
  }

  /** Crawls whose cursor is in memory (finished crawls leave once idle for CURSOR_IDLE_MS). */
  cachedCrawls(): string[] {
    return [...this.cursors.keys()];
  }

  /** Drops idle cursors, at most once a minute: safe at any time, the store holds what a cursor knows. */
  private sweep(): void {
    const now = this.clock.now();
    if (now - this.sweptAt < 60_000) return;
    this.sweptAt = now;
    for (const [crawlId, c] of this.cursors) if (now - c.usedAt > CURSOR_IDLE_MS) this.cursors.delete(crawlId);
  }

  async prepare(messages: Consumed<CrawlPage>[], batch: Batch): Promise<void> {
    this.sweep();
    batch.cancelled = await this.cancels.check(messages.map((m) => m.value.crawlId));
    if (this.snapshots) batch.previous = await previousSnapshots(this.snapshots, messages.map((m) => m.value));
  }

  async handle(msg: Consumed<CrawlPage>, batch: Batch): Promise<Emission[]> {
    const page = msg.value;
    if (batch.cancelled.has(page.crawlId)) {
      this.log.debug({ crawlId: page.crawlId, urlKey: page.urlKey }, "crawl cancelled: page dropped");
      this.metrics?.pagesStored.inc({ outcome: "cancelled" });
      return [];
    }
    const cursor = await this.cursor(page.crawlId, msg.partition);
    const batchKeys = batch.keys.get(page.crawlId) ?? new Set<string>();
    batch.keys.set(page.crawlId, batchKeys);
    const tokens = documentTokens(page.document);
    const done: FrontierInboxMessage = { type: "PageDone", crawlId: page.crawlId, urlKey: page.urlKey, credits: page.credits, ...(tokens > 0 ? { tokens } : {}) };
    // phase 1: the page event is on crawl.events before the frontier can complete the crawl, so crawl.completed
    // always follows every crawl.page of the crawl
    const doneEmission: Emission = { topic: "frontier.inbox", key: keys.crawl(page.crawlId), value: done, phase: 1 };
    const storedSeq = cursor.stored.get(page.urlKey);
    if (storedSeq !== undefined || batchKeys.has(page.urlKey)) {
      this.log.debug({ crawlId: page.crawlId, urlKey: page.urlKey, offset: msg.offset }, "page already stored");
      this.metrics?.pagesStored.inc({ outcome: "duplicate" });
      // a replay: its change record again (the same, from the snapshot this job took), in case the first was lost
      const taken = page.freshness ? batch.previous.get(historyKey(page.teamId ?? "", page.freshness.tag, page.freshness.urlKey ?? page.urlKey)) : undefined;
      const changes = taken?.crawlId === page.crawlId && taken.tracking ? this.changeEmissions(taken, page) : [];
      // stored by an earlier batch: its page event again under the seq it was stored at, in case a crash came between
      // the insert and the produce (webhook-emit hands an event id, crawl.page:<seq>, once); once per batch: a key this
      // batch stored or announced already is not announced again
      const again = storedSeq === undefined || batchKeys.has(page.urlKey) ? [] : await this.announceAgain(page, storedSeq, batch);
      batchKeys.add(page.urlKey);
      return [...again, ...changes, doneEmission];
    }
    const finalKey = page.finalUrlKey ?? page.urlKey;
    const batchFinals = batch.finals.get(page.crawlId) ?? new Set<string>();
    batch.finals.set(page.crawlId, batchFinals);
    // a batch scrapes what it was given: two URLs that redirect to one page are two documents
    if (page.kind !== "batch" && (cursor.finals.has(finalKey) || batchFinals.has(finalKey))) {
      // two URLs that end at one page (a redirect raced a link to its target): keep the first, silently
      this.metrics?.pagesStored.inc({ outcome: "raced" });
      const raced: FrontierInboxMessage = {
        type: "PageFailed", crawlId: page.crawlId, urlKey: page.urlKey, url: String(page.document.metadata.sourceURL),
        code: "SCRAPE_RACED_REDIRECT", error: `same page as an earlier document (${String(page.document.metadata.url)})`, duplicateOf: String(page.document.metadata.url),
      };
      return [{ topic: "frontier.inbox", key: keys.crawl(page.crawlId), value: raced }];
    }
    const seq = cursor.nextSeq++;
    batchKeys.add(page.urlKey);
    batchFinals.add(finalKey);
    const now = this.clock.now();
    const changes: Emission[] = [];
    if (page.freshness) {
      // change tracking: compared with the page's previous snapshot; the new snapshot is taken with the document
      const previous = batch.previous.get(historyKey(page.teamId ?? "", page.freshness.tag, page.freshness.urlKey ?? page.urlKey)) ?? null;
      const snapshot = trackChanges(page, page.freshness, previous, now);
      batch.snapshots.push(snapshot);
      changes.push(...this.changeEmissions(snapshot, page));
    }
    const doc = JSON.stringify(page.document);
    batch.rows.push({
      crawlId: page.crawlId,
      seq,
      urlKey: page.urlKey,
      finalKey,
      scrapeId: String(page.document.metadata.scrapeId),
      url: String(page.document.metadata.url),
      statusCode: Number(page.document.metadata.statusCode),
      credits: page.credits,
      storedAt: now,
      doc,
    });
    return [this.pageEvent(page, seq, now, doc), ...changes, doneEmission];
  }

  /**
   * The crawl.page event of a page stored earlier, again: with the document as stored (a second fetch of the URL, say
   * after a reissue, may have brought other content and another scrapeId). None once the crawl has ended: the frontier
   * completes a crawl only after every PageDone, which is produced after the page's event, so its events are out, and
   * one now would follow crawl.completed.
   */
  private async announceAgain(page: CrawlPage, seq: number, batch: Batch): Promise<Emission[]> {
    let running = batch.running.get(page.crawlId);
    if (running === undefined) {
      running = (await this.store.getCrawl(page.crawlId))?.status === "scraping";
      batch.running.set(page.crawlId, running);
    }
    if (!running) return [];
    if (!this.eventDocument) return [this.pageEvent(page, seq, this.clock.now(), "")];
    const stored = (await this.store.pageDocuments(page.crawlId, seq, Number.MAX_SAFE_INTEGER, 1)).docs[0];
    if (stored === undefined) return [];
    return [this.pageEvent({ ...page, document: JSON.parse(stored) as CrawlPage["document"] }, seq, this.clock.now(), stored)];
  }

  /**
   * The page's crawl.page event; its JSON embeds the document's text `doc` instead of serializing it a second time.
   * Without the document (CRAWL_EVENTS_DOCUMENT=false) it names the page by seq and urlKey: the document is on
   * crawl.pages already and stored before the event, where webhook-emit and the API's watchers read it.
   */
  private pageEvent(page: CrawlPage, seq: number, now: number, doc: string): Emission {
    const head = { crawlId: page.crawlId, ...(page.teamId ? { teamId: page.teamId } : {}), type: "crawl.page" as const, at: now, seq, ...(page.kind ? { kind: page.kind } : {}) };
    if (!this.eventDocument) return { topic: "crawl.events", key: keys.crawl(page.crawlId), value: { ...head, urlKey: page.urlKey } satisfies CrawlEvent, phase: 0 };
    const event: CrawlEvent = { ...head, document: page.document };
    return { topic: "crawl.events", key: keys.crawl(page.crawlId), value: event, json: jsonWith(head, "document", doc), phase: 0 };
  }

  /** The change feed's record of a page (none when it is the same), before its PageDone: before the crawl's end. */
  private changeEmissions(snapshot: Snapshot, page: CrawlPage): Emission[] {
    const record = changeRecord(snapshot, page.kind);
    return record ? [{ topic: "crawl.changes", key: keys.crawl(page.crawlId), value: record, phase: 0 }] : [];
  }

  /** Documents are durable before anyone hears of them. */
  async beforeProduce(batch: Batch): Promise<void> {
    // snapshots first: a replay after a crash between the two writes finds this job's snapshot and answers the same
    if (batch.snapshots.length > 0 && this.snapshots) {
      await this.snapshots.put(batch.snapshots);
      batch.snapshots = [];
    }
    if (batch.uncertain) await this.dropStored(batch);
    if (batch.rows.length === 0) return;
    try {
      await this.store.insertDocuments(batch.rows);
    } catch (err) {
      // the insert may have landed all the same (the server went away before it answered): the retry first drops the
      // rows the store has; and forget what this batch assumed, the cursor is rebuilt from the store
      batch.uncertain = true;
      for (const crawlId of batch.keys.keys()) this.cursors.delete(crawlId);
      throw err;
    }
    for (const row of batch.rows) this.cursors.get(row.crawlId)?.stored.set(row.urlKey, row.seq);
    for (const [crawlId, written] of batch.finals) {
      const c = this.cursors.get(crawlId);
      if (c) for (const k of written) c.finals.add(k);
    }
    this.metrics?.pagesStored.inc({ outcome: "stored" }, batch.rows.length);
    batch.rows = [];
  }

  /** Drops the batch's rows whose URL key the store already holds (an insert that failed but landed). */
  private async dropStored(batch: Batch): Promise<void> {
    const stored = new Map<string, Set<string>>();
    for (const crawlId of new Set(batch.rows.map((r) => r.crawlId))) stored.set(crawlId, new Set((await this.store.documentKeys(crawlId)).keys));
    const before = batch.rows.length;
    batch.rows = batch.rows.filter((r) => !stored.get(r.crawlId)?.has(r.urlKey));
    if (batch.rows.length < before) this.log.warn({ rows: before - batch.rows.length }, "a failed insert had been stored: not written again");
  }
}
