// Frontier adapter: runs the reducer over frontier.inbox, keeps crawl states in memory, persists them to the store.
// Order per batch: produce the fetch tasks and other phase-0 emissions (acked), persist URL states and crawl records,
// produce the terminal events (phase 1), then commit. A crash in between replays the batch: the reducer re-emits
// (harmless duplicates, dropped downstream), and a replayed message that ended a crawl announces the end again.
import type { CrawlEvent, FetchTask, FrontierInboxMessage, TeamAdmissionMessage } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Metrics } from "../runtime/metrics.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlStore, ErrorRow, UrlRow } from "../store/crawl-store.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import { admitted, isHeld, reduce, restore, resume, teamOf, toRecord, type CrawlState } from "./reducer.ts";
import { keys } from "../topology.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { InboxOwnership, reissueAfterMs, reissueDue, type StageLimits } from "./reissue.ts";
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import { politenessKey } from "../url/politeness-key.ts";
import { changeRecord } from "../store/change-feed.ts";
import { URL_LOG_MAX } from "./url-log.ts";

const TERMINAL = new Set(["crawl.completed", "crawl.failed", "crawl.cancelled"]);

/**
 * JobEnded for the team's admission, with every announcement of a crawl's end (also a replayed one: the first may be
 * lost in a crash), after the terminal state is persisted (phase 1).
 */
function jobEnded(state: CrawlState, emissions: Emission[], now: number): Emission[] {
  if (!emissions.some((e) => e.topic === "crawl.events" && TERMINAL.has((e.value as CrawlEvent).type))) return [];
  const value: TeamAdmissionMessage = { type: "JobEnded", teamId: teamOf(state), crawlId: state.crawlId, at: now };
  return [{ topic: "team.admission", key: keys.team(teamOf(state)), value, phase: 1 }];
}

interface Batch {
  urls: UrlRow[];
  errors: ErrorRow[];
  dirty: Set<string>;
}

export class FrontierProcessor extends DeclaredProcessor implements Processor<FrontierInboxMessage, Batch> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly states = new PartitionCache<CrawlState>();
  /** Finished crawls stay in memory (oldest evicted first) so that late events need no store read. */
  private readonly maxFinished = 1000;
  /** ... and their URL tables together at most this many bytes (a 4,000,000-URL crawl's is ~60 MB), the newest kept. */
  private readonly maxFinishedBytes: number;
  private readonly finished: string[] = [];
  private readonly store: CrawlStore;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: Metrics | undefined;
  /** The stages' time limits the reissue bound is derived from (reissue.ts); absent: nothing is reissued. */
  private readonly limits: (StageLimits & { politenessScope?: string }) | undefined;
  /** Crawls whose reissue was asked for (ResumeRequested produced, not handled yet), with when. */
  private readonly asked = new Map<string, number>();
  /** Running crawls found in the store but in no frontier's memory, whose reissue was asked for, with when. */
  private readonly askedOrphans = new Map<string, number>();
  /** Which crawls' frontier.inbox partition is this process's: the orphan scan looks at those only. */
  private readonly inbox: InboxOwnership;
  private readonly snapshots: SnapshotStore | undefined;
  /** skipped URLs listed per crawl (url-log.ts) */
  private readonly urlLogMax: number;

  /**
   * metrics: crawls started, ended by status, credits of ended crawls; snapshots: change tracking's history;
   * urlLogMax: CRAWL_URL_LOG_MAX; limits.topicPartitions: KAFKA_PARTITIONS (the config is passed as limits);
   * finishedBytesMax: URL tables of finished crawls kept in memory (64 MB)
   */
  constructor(deps: { store: CrawlStore; clock: Clock; log: Logger; metrics?: Metrics; limits?: StageLimits & { topicPartitions?: number; politenessScope?: string }; snapshots?: SnapshotStore; urlLogMax?: number; finishedBytesMax?: number }) {
    super("frontier");
    this.maxFinishedBytes = deps.finishedBytesMax ?? 64 * 1024 * 1024;
    this.inbox = new InboxOwnership(deps.limits?.topicPartitions ?? 0);
    this.urlLogMax = deps.urlLogMax ?? URL_LOG_MAX;
    this.snapshots = deps.snapshots;
    this.metrics = deps.metrics;
    this.limits = deps.limits;
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
    return restore(record, await this.store.loadUrls(crawlId), this.urlLogMax);
  }

  async handle(msg: Consumed<FrontierInboxMessage>, batch: Batch): Promise<Emission[]> {
    const out = await this.handleEvent(msg, batch);
    // the reducer keys fetch tasks by host; POLITENESS_SCOPE=domain keys them by registrable domain
    if (this.limits?.politenessScope !== "domain") return out;
    return out.map((e) => (e.topic === "fetch.tasks" ? { ...e, key: keys.politeness(politenessKey((e.value as FetchTask).url, "domain")) } : e));
  }

  private async handleEvent(msg: Consumed<FrontierInboxMessage>, batch: Batch): Promise<Emission[]> {
    if (this.inbox.seen(msg.key, msg.partition)) this.log.warn({ partition: msg.partition }, "frontier.inbox does not have KAFKA_PARTITIONS partitions (an existing topic keeps its own): the orphan scan looks at every crawl");
    let event = msg.value;
    let state = this.states.get(event.crawlId) ?? null;
    if (!state) state = await this.load(event.crawlId);
    if (event.type === "Admitted") {
      if (state) return this.admit(state, event, msg.partition, batch);
      this.log.warn({ crawlId: event.crawlId }, "Admitted for an unknown crawl ignored");
      return [];
    }
    if (event.type === "ResumeRequested") {
      if (state) return this.resume(state, msg.partition, batch);
      // the frontier never saw the crawl: its CrawlRequested was lost with the API's write; ask again from the record
      const record = await this.store.getCrawl(event.crawlId);
      if (!record || record.status !== "scraping") return [];
      if (record.options.kind === "batch") {
        // a batch's URLs are not in its record: they were lost with the request; say so rather than wait forever
        const now = this.clock.now();
        await this.store.saveCrawls([{ ...record, version: 1, status: "failed", error: "the batch scrape was lost in a crash before it started; submit it again", updatedAt: now, completedAt: now, discoveryDone: true }]);
        this.log.warn({ crawlId: record.crawlId }, "batch request lost in a crash: marked failed");
        return [];
      }
      event = { type: "CrawlRequested", crawlId: record.crawlId, url: record.url, options: record.options, createdAt: record.createdAt, teamId: record.teamId, webhook: record.webhook };
      this.log.warn({ crawlId: record.crawlId }, "crawl request lost in a crash: requested again from its record");
    }
    if (!state && event.type !== "CrawlRequested") {
      this.log.warn({ crawlId: event.crawlId, type: event.type, partition: msg.partition, offset: msg.offset }, "event for an unknown crawl ignored");
      return [];
    }
    const before = state?.status;
    const { state: next, step } = reduce(state, event, this.clock.now(), this.urlLogMax);
    if (!next) return step.emissions;
    if (!state) this.metrics?.crawlsStarted.inc();
    if (before !== next.status && next.status !== "scraping") {
      this.metrics?.crawlsEnded.inc({ status: next.status });
      this.metrics?.creditsUsed.inc(next.creditsUsed);
    }
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
    return this.trackedEnd(next, [...step.emissions, ...jobEnded(next, step.emissions, this.clock.now())], batch);
  }

  /** Admitted: the held job's fetch tasks, for its queued URLs (in the store, or written by this batch). */
  private async admit(state: CrawlState, event: Extract<FrontierInboxMessage, { type: "Admitted" }>, partition: number, batch: Batch): Promise<Emission[]> {
    if (!isHeld(state)) return [];
    const rows = [...(await this.store.loadUrls(state.crawlId)), ...batch.urls.filter((r) => r.crawlId === state.crawlId && r.url)];
    const step = admitted(state, rows.filter((r) => r.state === URL_STATE.queued), event, this.clock.now());
    if (!step.changed) return [];
    state.version++;
    batch.dirty.add(state.crawlId);
    this.states.set(state.crawlId, partition, state);
    this.log.info({ crawlId: state.crawlId, tasks: step.emissions.length, limited: event.limited, queuedMs: event.queuedMs }, "crawl admitted by its team's concurrency limit");
    return this.trackedEnd(state, [...step.emissions, ...jobEnded(state, step.emissions, this.clock.now())], batch);
  }

  onPartitionsAssigned(partitions: number[]): void {
    this.inbox.assign(partitions);
    const dropped = this.states.retain(partitions);
    if (dropped) this.log.info({ dropped, partitions }, "crawl states of partitions moved away forgotten");
  }

  /**
   * The crawls of this process's partitions that made no progress for their reissue bound, each asked for at most
   * once per bound: the caller produces ResumeRequested for them, which this processor handles in order with the
   * crawl's other events (resume below).
   */
  dueForReissue(now: number): string[] {
    const limits = this.limits;
    if (!limits) return [];
    const due: string[] = [];
    for (const crawlId of this.asked.keys()) if (this.states.get(crawlId)?.status !== "scraping") this.asked.delete(crawlId);
    for (const [crawlId, state] of this.states) {
      if (!reissueDue(state, now, limits)) continue;
      const askedAt = this.asked.get(crawlId);
      if (askedAt !== undefined && now - askedAt < reissueAfterMs(limits, state.options)) continue;
      this.asked.set(crawlId, now);
      due.push(crawlId);
      this.log.warn({ crawlId, queued: state.queued, discovering: state.discovering, stalledMs: now - state.progressAt, reissues: state.reissues }, "crawl made no progress for its reissue bound: its outstanding work is sent again");
    }
    return due;
  }

  /**
   * Running crawls of the store that no frontier process has in memory and whose record has not changed for their
   * reissue bound (a restart forgot them, and every message that would have brought them back was lost or
   * dead-lettered), of this process's frontier.inbox partitions only (another replica's are in its memory: each was
   * read every scan, and asked for once per bound past the owner's backoff): each gets ResumeRequested, at most once
   * per bound, like a stalled crawl. The frontier that owns its partition restores it from the store and sends its
   * outstanding work again, or ends it when nothing is outstanding (failed, with the reason, when no page was stored);
   * one it never saw is requested again from its record.
   */
  async orphansForReissue(now: number): Promise<string[]> {
    const limits = this.limits;
    if (!limits) return [];
    const due: string[] = [];
    for (const [crawlId, at] of this.askedOrphans) if (now - at > 8 * reissueAfterMs(limits, { formats: [] })) this.askedOrphans.delete(crawlId);
    for (const crawlId of await this.store.runningCrawlIds()) {
      if (this.states.get(crawlId) || !this.inbox.owns(crawlId)) continue;
      const record = await this.store.getCrawl(crawlId);
      if (!record || record.status !== "scraping") continue;
      const bound = reissueAfterMs(limits, record.options);
      const askedAt = this.askedOrphans.get(crawlId);
      if (now - record.updatedAt < bound || (askedAt !== undefined && now - askedAt < bound)) continue;
      this.askedOrphans.set(crawlId, now);
      due.push(crawlId);
      this.log.warn({ crawlId, version: record.version, unchangedMs: now - record.updatedAt }, "running crawl that no frontier has in memory made no progress for its reissue bound: restored and resumed");
    }
    return due;
  }

  /** ResumeRequested (after a crash, or a stall: dueForReissue): the fetch tasks of the queued URLs again (from the store, which has their URLs). */
  private async resume(state: CrawlState, partition: number, batch: Batch): Promise<Emission[]> {
    this.asked.delete(state.crawlId);
    const queued = (await this.store.loadUrls(state.crawlId)).filter((r) => r.state === URL_STATE.queued);
    const step = resume(state, queued, this.clock.now());
    if (step.changed) {
      state.version++;
      batch.dirty.add(state.crawlId);
    }
    this.states.set(state.crawlId, partition, state);
    this.log.warn({ crawlId: state.crawlId, tasks: step.emissions.length, reissues: state.reissues }, "crawl resumed: fetch tasks of its queued URLs sent again");
    // a crawl that turns out to be finished frees its team's slot
    return this.trackedEnd(state, [...step.emissions, ...jobEnded(state, step.emissions, this.clock.now())], batch);
  }

  /** After phase 0 (fetch tasks, started): persist; phase 1 (crawl.completed, failed, cancelled) follows, so whoever
   * hears of the end finds it in the store. */
  async afterPhase(batch: Batch, phase: number): Promise<void> {
    if (phase === 0) await this.persist(batch);
  }

  /**
   * The end of a job with change tracking, on every announcement of it (a replay answers the same): the pages of a
   * crawl's lineage (same team, tag and start URL) that earlier crawls stored and this one did not reach (neither
   * stored nor failed nor skipped: every URL it saw is in its URL states, or in this batch's) get a tombstone, removed,
   * and their crawl.changes records; crawl.completed gets the job's counts by change status. The tombstones are
   * written before the record says completed and before crawl.completed (phase 1) announces the end.
   */
  private async trackedEnd(state: CrawlState, emissions: Emission[], batch: Batch): Promise<Emission[]> {
    const ct = state.options.changeTracking;
    const completed = emissions.find((e) => e.topic === "crawl.events" && (e.value as CrawlEvent).type === "crawl.completed");
    if (!this.snapshots || !ct || !completed) return emissions;
    const teamId = teamOf(state);
    const kind = state.options.kind === "batch" ? "batch" : undefined;
    const changes: Emission[] = [];
    if (!kind) {
      const rows = [...(await this.store.loadUrls(state.crawlId)), ...batch.urls.filter((u) => u.crawlId === state.crawlId)];
      const reached = new Set(rows.filter((u) => u.state !== URL_STATE.skipped).map((u) => u.urlKey));
      const removed = await this.snapshots.sweepRemoved({ teamId, tag: ct.tag, origin: crawlUrlKey(state.startUrl, state.options), crawlId: state.crawlId, reached, now: this.clock.now() });
      if (removed.length) this.log.info({ crawlId: state.crawlId, removed: removed.length }, "change tracking: pages no longer reached reported removed");
      for (const s of removed) {
        const value = changeRecord(s, kind);
        if (value) changes.push({ topic: "crawl.changes", key: keys.crawl(state.crawlId), value, phase: 1 });
      }
    }
    const counts = await this.snapshots.changeCounts(teamId, ct.tag, state.crawlId);
    const summary: Emission = { ...completed, value: { ...(completed.value as CrawlEvent), changeTracking: counts } };
    return [...emissions.map((e) => (e === completed ? summary : e)), ...changes];
  }

  /** The oldest finished crawls leave memory past maxFinished of them or maxFinishedBytes of URL tables. */
  private evictFinished(): void {
    let bytes = 0;
    for (const id of this.finished) bytes += this.states.get(id)?.urls.bytes ?? 0;
    while (this.finished.length > this.maxFinished || (bytes > this.maxFinishedBytes && this.finished.length > 1)) {
      const id = this.finished.shift() as string;
      bytes -= this.states.get(id)?.urls.bytes ?? 0;
      this.states.delete(id);
    }
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
      this.evictFinished();
    }
  }
}
