// In-process adapter of the Bus port with Kafka's semantics for what the processors rely on: topics split into
// partitions by key hash (per-key order), one consumer group per processor with committed offsets, at-least-once
// redelivery of anything not committed. With a data directory, logs and offsets survive a restart.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { topics, type LogicalTopic } from "../topology.ts";
import { AppendLog, FRAME_BYTES, readLines, writeJsonAtomic } from "./append-log.ts";
import { LOST, Partition, type Entry, type MemoryBudget } from "./bus-partition.ts";
import { busRecord, parseBusRecord } from "./bus-record.ts";
import { batchHandler, type RawMessage, type RunnerHandle } from "./batch.ts";
import { laneHandler } from "./lanes.ts";
import { partitionOf } from "./partition-of.ts";
import { nextWake } from "./next-wake.ts";
import { turn } from "./yield-turn.ts";
import { sleep } from "./retry.ts";
import type { Bus, Emission, Processor, QueueStat, QueueStats } from "./bus.ts";
import type { Logger } from "./logger.ts";

export { busRecord, parseBusRecord, partitionOf };

const MAX_BATCH = 500;
/** Wait before a consumer tries again to read records back from a log that failed to read. */
const READ_RETRY_MS = 1000;
/**
 * A batch also stops at this many bytes of message values (at least one message): decoding, validating and handling
 * a batch runs on the event loop the API shares in embedded mode, so a batch of 500 fetched pages (~8 MB of JSON)
 * would hold every status read behind it for tens of milliseconds.
 */
const MAX_BATCH_BYTES = 512 * 1024;
/** A partition's log every record of which was committed is emptied once it holds this many bytes. */
const COMPACT_BYTES = 64 * 1024 * 1024;
/**
 * Characters of message values the bus keeps in memory (EMBEDDED_BUS_MEMORY_BYTES). With a data directory, a record
 * produced or read at start while they are spent stays only in its partition's log, which consumers read it back from
 * (bus-partition.ts). The topics bounded in memory (BOUNDED_TOPICS) keep theirs in memory and do not count here.
 */
export const BUS_MEMORY_CHARS = 16 * 1024 * 1024;
/** Committed offsets reach disk at most this often, and at stop (offsets.json after every batch: 3-4 % of the event
 * loop). A crash redelivers this much more work, handled idempotently (as with KAFKA_COMMIT_INTERVAL_MS). */
const OFFSETS_SAVE_MS = 200;
/**
 * Topics that carry page bodies are bounded in memory: once the values a topic holds (produced, not yet committed by
 * every group consuming it in this process) pass this many characters, `produce` to it returns only when consumers
 * have brought it back under. Without the bound the fetchers ran ahead of conversion: at 40 % of a 100,000-page crawl
 * 56,000 fetched pages (330 MB) waited in `pages.fetched`, and RSS doubled over the crawl. The consumers of these
 * topics (convert, extract-json, sink) produce only to topics downstream of them or unbounded ones, so a wait can
 * never close a cycle; a consumer that stops releases its topic's producers (shutdown never waits on the bound).
 */
export const BOUNDED_TOPICS: ReadonlySet<string> = new Set(["pages.fetched", "pages.extract", "crawl.pages"]);
export const TOPIC_MEMORY_CHARS = 32 * 1024 * 1024;

export interface EmbeddedBusOptions {
  partitions: number;
  /** bound of each bounded topic in memory (characters of values; default TOPIC_MEMORY_CHARS) */
  topicMemoryChars?: number;
  /** the bounded topics (default BOUNDED_TOPICS) */
  boundedTopics?: ReadonlySet<string>;
  /** null: memory only (tests). */
  dir: string | null;
  /** characters of values kept in memory before records stay on disk only (default BUS_MEMORY_CHARS; with `dir` only) */
  memoryChars?: number;
  /** a partition's log is emptied once every record was committed and it holds this many bytes (default COMPACT_BYTES) */
  compactBytes?: number;
  log: Logger;
}

export class EmbeddedBus implements Bus, QueueStats {
  private readonly partitions: number;
  private readonly dir: string | null;
  private readonly log: Logger;
  private readonly topics = new Map<string, Partition[]>();
  /** group -> topic -> next offset per partition */
  private offsets: Record<string, Record<string, number[]>> = {};
  private readonly consumersOf = new Map<string, Set<string>>();
  private offsetsDirty = false;
  /** What opening the logs found broken by a crash: torn tails dropped, and offsets missing from a log. */
  readonly damage = { tornBytes: 0, missingOffsets: 0, damagedRecords: 0 };
  private offsetsWrite: Promise<void> = Promise.resolve();
  private offsetsTimer: NodeJS.Timeout | undefined;
  private readonly topicMemoryChars: number;
  private readonly boundedTopics: ReadonlySet<string>;
  /** producers waiting for room in a bounded topic */
  private readonly roomWaiters = new Map<string, (() => void)[]>();
  /** bounded topics one of whose consumers stopped: their producers no longer wait */
  private readonly released = new Set<string>();
  private readonly budget: MemoryBudget;
  private readonly compactBytes: number;

  private constructor(opts: EmbeddedBusOptions) {
    this.partitions = opts.partitions;
    this.topicMemoryChars = opts.topicMemoryChars ?? TOPIC_MEMORY_CHARS;
    this.boundedTopics = opts.boundedTopics ?? BOUNDED_TOPICS;
    this.dir = opts.dir;
    this.budget = { used: 0, limit: opts.memoryChars ?? BUS_MEMORY_CHARS, spilledReads: 0, spilledRecords: 0 };
    this.compactBytes = opts.compactBytes ?? COMPACT_BYTES;
    this.log = opts.log.child({ component: "embedded-bus" });
  }

  static async open(opts: EmbeddedBusOptions): Promise<EmbeddedBus> {
    const bus = new EmbeddedBus(opts);
    await bus.load();
    return bus;
  }

  private topicName(topic: LogicalTopic, dlq?: boolean): string {
    return dlq ? `${topic}.dlq` : topic;
  }

  private partitionsOf(topic: string): Partition[] {
    let ps = this.topics.get(topic);
    if (!ps) {
      const budget = this.boundedTopics.has(topic) ? null : this.budget;
      ps = Array.from({ length: this.partitions }, (_, p) => {
        const part = new Partition(this.dir ? new AppendLog(join(this.dir, "bus", topic, `${p}.log`)) : null, budget);
        part.parse = parseBusRecord;
        return part;
      });
      this.topics.set(topic, ps);
    }
    return ps;
  }

  private async load(): Promise<void> {
    if (!this.dir) return;
    const offsetsFile = join(this.dir, "bus", "offsets.json");
    if (existsSync(offsetsFile)) this.offsets = JSON.parse(readFileSync(offsetsFile, "utf8"));
    for (const t of topics.flatMap((t) => [t.name, `${t.name}.dlq`])) {
      const ps = this.partitionsOf(t);
      for (const [p, part] of ps.entries()) {
        if (!part.log) continue;
        this.damage.tornBytes += part.log.repairedBytes;
        if (part.log.repairedBytes) this.log.warn({ topic: t, file: part.log.path, bytes: part.log.repairedBytes }, "torn last record dropped (its write never completed)");
        let first = true;
        const damaged = (pos: number, bytes: number) => {
          this.damage.damagedRecords++;
          this.log.error({ topic: t, file: part.log?.path, pos, bytes }, "damaged record skipped (checksum failed)");
        };
        for await (const { line, pos, len } of readLines(part.log.path, damaged)) {
          let rec: { o: number; k: string; v: string };
          try {
            rec = parseBusRecord(line);
          } catch {
            // only a log written before tails were repaired can hold a broken line in the middle
            this.log.error({ topic: t, file: part.log.path }, "unreadable record skipped");
            continue;
          }
          if (first) {
            part.startAt(rec.o);
            first = false;
          }
          // offsets come from the records, not from counting lines: a lost record leaves a gap, never a shift
          if (rec.o < part.end) continue;
          if (rec.o > part.end) {
            this.damage.missingOffsets += rec.o - part.end;
            this.log.error({ topic: t, file: part.log.path, from: part.end, to: rec.o }, "records missing from the log");
            while (part.end < rec.o) part.push(LOST, null);
          }
          part.push({ key: rec.k, value: rec.v }, { pos, len });
        }
        // a log compacted to nothing goes on from the offsets its consumers committed (not from 0, below them)
        if (first) part.startAt(Math.max(0, ...Object.values(this.offsets).map((byTopic) => byTopic[t]?.[p] ?? 0)));
        part.durableEnd = part.end;
      }
    }
  }

  async produce(messages: Emission[]): Promise<void> {
    const writes: Promise<void>[] = [];
    const topicOf = new Map<Partition, string>();
    const partIndex = new Map<Partition, number>();
    const byPartition = new Map<Partition, { entries: Entry[]; lines: string[] }>();
    for (const m of messages) {
      const topic = this.topicName(m.topic, m.deadLetter);
      const index = partitionOf(m.key, this.partitions);
      const part = this.partitionsOf(topic)[index] as Partition;
      topicOf.set(part, topic);
      partIndex.set(part, index);
      const value = m.json ?? JSON.stringify(m.value);
      let acc = byPartition.get(part);
      if (!acc) byPartition.set(part, (acc = { entries: [], lines: [] }));
      acc.lines.push(busRecord(part.end + acc.entries.length, m.key, value));
      acc.entries.push({ key: m.key, value });
    }
    for (const [part, { entries, lines }] of byPartition) {
      let done: Promise<void>;
      if (part.log) {
        const { positions, written } = part.log.append(lines);
        // each record's JSON ends where the next record's begins, less the frame and its newline
        const ends = positions.slice(1);
        ends.push(part.log.size);
        for (const [i, e] of entries.entries()) part.push(e, { pos: positions[i] as number, len: (ends[i] as number) - (positions[i] as number) - FRAME_BYTES - 1 });
        done = written;
      } else {
        for (const e of entries) part.push(e, null);
        done = Promise.resolve();
      }
      const upTo = part.end;
      writes.push(
        done.then(() => {
          part.durableEnd = Math.max(part.durableEnd, upTo);
          part.wake();
          if (!this.consumersOf.get(topicOf.get(part) as string)?.size) this.trim(topicOf.get(part) as string, partIndex.get(part) as number);
        }),
      );
    }
    await Promise.all(writes);
    for (const topic of new Set(topicOf.values())) await this.roomIn(topic);
  }

  /** Characters of values the bus holds in memory against its budget, and the records read back from the logs. */
  memoryStats(): { usedChars: number; limitChars: number; spilled: number; spilledReads: number; spilledRecords: number } {
    let spilled = 0;
    for (const ps of this.topics.values()) for (const p of ps) spilled += p.spilled;
    const b = this.budget;
    return { usedChars: b.used, limitChars: b.limit, spilled, spilledReads: b.spilledReads, spilledRecords: b.spilledRecords };
  }

  /** Characters of values a topic holds (in memory, and on disk only for topics that are not bounded). */
  heldChars(topic: string): number {
    return this.partitionsOf(topic).reduce((n, p) => n + p.bytes, 0);
  }

  /** Resolves once a bounded topic holds less than its bound (at once for other topics). */
  private async roomIn(topic: string): Promise<void> {
    while (this.boundedTopics.has(topic) && !this.released.has(topic) && this.consumersOf.get(topic)?.size && this.heldChars(topic) >= this.topicMemoryChars) {
      await new Promise<void>((resolve) => {
        const list = this.roomWaiters.get(topic) ?? [];
        list.push(resolve);
        this.roomWaiters.set(topic, list);
      });
    }
  }

  private wakeProducers(topic: string): void {
    const list = this.roomWaiters.get(topic);
    if (!list?.length) return;
    this.roomWaiters.delete(topic);
    for (const resolve of list) resolve();
  }

  private committed(group: string, topic: string): number[] {
    const byTopic = (this.offsets[group] ??= {});
    const list = (byTopic[topic] ??= []);
    const ps = this.partitionsOf(topic);
    for (let p = 0; p < this.partitions; p++) list[p] ??= ps[p]?.base ?? 0;
    return list;
  }

  private saveOffsets(): void {
    if (!this.dir) return;
    this.offsetsDirty = true;
    this.offsetsTimer ??= setTimeout(() => void this.flushOffsets(), OFFSETS_SAVE_MS).unref();
  }

  private flushOffsets(): Promise<void> {
    clearTimeout(this.offsetsTimer);
    this.offsetsTimer = undefined;
    this.offsetsWrite = this.offsetsWrite.then(async () => {
      if (!this.offsetsDirty || !this.dir) return;
      this.offsetsDirty = false;
      try {
        await writeJsonAtomic(join(this.dir, "bus", "offsets.json"), this.offsets);
      } catch (err) {
        this.offsetsDirty = true; // tried again with the next commit, or at stop
        this.log.error({ err, code: "BUS_OFFSETS_WRITE_FAILED" }, "embedded bus: committed offsets not written");
      }
    });
    return this.offsetsWrite;
  }

  /**
   * Drops what every consumer group of the topic has committed, from memory, and from disk when it is large.
   * A topic nobody consumes in this process keeps nothing in memory (its log stays on disk until it is large).
   */
  private trim(topic: string, p: number): void {
    const groups = this.consumersOf.get(topic) ?? new Set<string>();
    const part = this.partitionsOf(topic)[p] as Partition;
    const min = groups.size === 0 ? part.durableEnd : Math.min(...[...groups].map((g) => this.committed(g, topic)[p] ?? 0));
    if (part.dropBelow(min)) {
      if (this.roomWaiters.has(topic) && this.heldChars(topic) < this.topicMemoryChars) this.wakeProducers(topic);
    }
    if (part.log && part.empty && part.log.size > this.compactBytes) {
      part.log.rewrite([]).catch((err) => this.log.warn({ err, topic }, "log compaction failed"));
    }
  }

  /** Runs a processor as consumer group `processor.group`: one loop per partition, a few partitions at a time. */
  consume<T, B>(processor: Processor<T, B>, parentLog: Logger): RunnerHandle {
    const topic = processor.topic;
    // a broadcast consumer is the only one of its kind in this process and starts at the end of the topic
    const group = processor.broadcast ? `${processor.group}.broadcast` : processor.group;
    const log = parentLog.child({ component: processor.name, topic });
    const groups = this.consumersOf.get(topic) ?? new Set();
    groups.add(group);
    this.released.delete(topic); // a consumer again: producers wait for room again
    this.consumersOf.set(topic, groups);
    const stopping = new AbortController();
    const ps = this.partitionsOf(topic);
    const committed = this.committed(group, topic);
    if (processor.broadcast) ps.forEach((part, p) => (committed[p] = part.durableEnd));
    for (let p = 0; p < this.partitions; p++) this.trim(topic, p);
    const commit = (p: number, next: number) => {
      committed[p] = next;
      this.saveOffsets();
      this.trim(topic, p);
    };
    // keyed mode: a batch is done once its messages are in lanes, which commit as they go (lanes.ts)
    const lanes = processor.mode === "keyed" ? laneHandler(processor, this, log, stopping.signal, (p, next) => commit(p, Number(next))) : null;
    const handle = lanes?.accept ?? batchHandler(processor, this, log, stopping.signal);
    const position = [...committed];

    const loop = async (p: number) => {
      const part = ps[p] as Partition;
      while (!stopping.signal.aborted) {
        // a group behind the oldest record kept (an emptied log went on from the offsets of the groups ahead) starts there
        const from = Math.max(position[p] ?? 0, part.base);
        if (from >= part.durableEnd) {
          await nextWake(part.waiters, stopping.signal);
          continue;
        }
        const read = part.read(from, Math.min(part.durableEnd, from + MAX_BATCH), MAX_BATCH_BYTES);
        let batch: RawMessage[];
        if (Array.isArray(read)) batch = read;
        else {
          // records the memory budget left on disk only: read back off the event loop
          try {
            batch = await read;
          } catch (err) {
            if (stopping.signal.aborted) break;
            log.error({ err, partition: p, offset: from, code: "BUS_READ_FAILED" }, "embedded bus: records not read back from the log; trying again");
            await sleep(READ_RETRY_MS);
            continue;
          }
          if (stopping.signal.aborted) break;
        }
        let done: number;
        try {
          done = await handle(p, batch);
        } catch (err) {
          if (stopping.signal.aborted) break; // not committed: redelivered after a restart
          log.error({ err, partition: p }, "batch failed; redelivering");
          continue;
        }
        position[p] = from + done;
        if (!lanes) commit(p, from + done);
        await turn(); // a backlog in memory would otherwise run batch after batch as one task (yield-turn.ts)
      }
    };
    const loops = ps.map((_, p) => loop(p));
    log.info({ group, partitions: this.partitions }, "embedded consumer running");
    return {
      stop: async () => {
        stopping.abort();
        // producers waiting for this consumer to make room would wait for ever
        this.released.add(topic);
        this.wakeProducers(topic);
        await Promise.all(loops);
        await lanes?.drain();
        await this.flushOffsets();
        log.info("consumer stopped");
      },
    };
  }

  async queueStats(): Promise<QueueStat[]> {
    const out: QueueStat[] = [];
    for (const [topic, groups] of this.consumersOf) {
      const ps = this.partitionsOf(topic);
      const produced = ps.reduce((n, p) => n + p.end, 0);
      for (const group of groups) {
        const committed = this.committed(group, topic);
        const partitions = ps.map((p, i) => ({ partition: i, lag: Math.max(0, p.end - (committed[i] ?? 0)) }));
        out.push({ topic, group, produced, lag: partitions.reduce((n, p) => n + p.lag, 0), partitions });
      }
    }
    return out.sort((a, b) => a.topic.localeCompare(b.topic));
  }

  /** Call once every consumer of this process is registered: topics nobody consumes leave memory. */
  trimUnconsumed(): void {
    for (const [topic, ps] of this.topics) {
      if (this.consumersOf.get(topic)?.size) continue;
      for (let p = 0; p < ps.length; p++) this.trim(topic, p);
    }
  }

  async close(): Promise<void> {
    await this.flushOffsets();
    for (const ps of this.topics.values()) for (const p of ps) await p.log?.close();
  }
}
