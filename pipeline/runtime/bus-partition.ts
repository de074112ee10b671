// One partition of the embedded bus: the records not yet committed by every consumer group, by offset. With a log on
// disk, a record that finds the bus's memory budget spent is not kept in memory: the partition keeps only where its
// JSON is in the log (12 bytes: position and length), and a consumer that reaches it reads it back from the log, a
// run of such records in one positional read off the event loop. A queue of discovered URLs millions long then costs
// 20 bytes a record in memory (its slot, position and length) instead of the whole message (~1 KB of heap each).
// Consumers read in offset order from anywhere between the oldest retained record and the end; a record's bytes in
// the log never move while it is retained (the log is compacted only once every record was committed: EmbeddedBus).
import { open } from "node:fs/promises";
import type { AppendLog } from "./append-log.ts";
import type { RawMessage } from "./batch.ts";

export interface Entry {
  key: string;
  value: string;
}

/** Stands for a record lost from a log (only possible in logs written before torn tails were repaired). */
export const LOST: Entry = { key: "", value: "null" };

/** Characters of values the partitions of one bus hold in memory, and how many they may hold. */
export interface MemoryBudget {
  used: number;
  readonly limit: number;
  /** records read back from the logs, and the reads that did it */
  spilledReads: number;
  spilledRecords: number;
}

/** Where a record's JSON is in the partition's log. */
export interface Place {
  pos: number;
  len: number;
}

/** Reads a record's JSON back into its key and value (EmbeddedBus's record format). */
export type RecordParser = (json: string) => { o: number; k: string; v: string };

const INITIAL_CAPACITY = 64;

export class Partition {
  /** Offset of the oldest retained record. */
  base = 0;
  /** Offsets below this are on disk (and visible to consumers). */
  durableEnd = 0;
  /** Characters of the values retained (in memory, and on disk only: their JSON's bytes), for bounded topics. */
  bytes = 0;
  readonly log: AppendLog | null;
  waiters: (() => void)[] = [];
  /** Index in the arrays below of the record at `base`; `count` records are retained. */
  private head = 0;
  private count = 0;
  /** The record, or undefined when it is on disk only. */
  private mem: (Entry | undefined)[] = [];
  /** Byte position and length of each record's JSON in the log (with a log only). */
  private pos: Float64Array;
  private len: Uint32Array;
  private readonly budget: MemoryBudget | null;

  /** `budget` null: every record stays in memory (no log, or a topic bounded in memory by other means). */
  constructor(log: AppendLog | null, budget: MemoryBudget | null) {
    this.log = log;
    this.budget = log ? budget : null;
    this.pos = new Float64Array(log ? INITIAL_CAPACITY : 0);
    this.len = new Uint32Array(log ? INITIAL_CAPACITY : 0);
  }

  get end(): number {
    return this.base + this.count;
  }

  /** Records retained only on disk. */
  get spilled(): number {
    let n = 0;
    for (let i = this.head; i < this.head + this.count; i++) if (this.mem[i] === undefined) n++;
    return n;
  }

  wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Appends the record at offset `end`; `place`: where its JSON is in the log (null: memory only). */
  push(entry: Entry, place: Place | null): void {
    const i = this.head + this.count;
    const budget = this.budget;
    if (place && budget && entry !== LOST && budget.used + entry.value.length > budget.limit) {
      this.mem[i] = undefined;
      this.bytes += place.len;
    } else {
      this.mem[i] = entry;
      this.bytes += entry.value.length;
      if (budget) budget.used += entry.value.length;
    }
    if (this.log) {
      if (i >= this.pos.length) this.grow();
      this.pos[i] = place?.pos ?? -1;
      this.len[i] = place?.len ?? 0;
    }
    this.count++;
  }

  /** Drops the records below `offset`; returns whether any was dropped. */
  dropBelow(offset: number): boolean {
    if (offset <= this.base) return false;
    const n = Math.min(offset - this.base, this.count);
    for (let i = this.head; i < this.head + n; i++) {
      const e = this.mem[i];
      if (e === undefined) this.bytes -= this.len[i] as number;
      else {
        this.bytes -= e.value.length;
        if (this.budget) this.budget.used -= e.value.length;
      }
      this.mem[i] = undefined;
    }
    this.head += n;
    this.count -= n;
    // committed past the end (offsets saved after the log was emptied): the next record takes that offset, as before
    this.base = this.count === 0 ? offset : this.base + n;
    if (this.count === 0 || (this.head > 4096 && this.head >= this.count)) this.pack();
    return true;
  }

  /** Whether every retained record was dropped. */
  get empty(): boolean {
    return this.count === 0;
  }

  /** An empty partition starts again at `offset` (a log compacted to nothing keeps counting where it was). */
  startAt(offset: number): void {
    if (this.count === 0) this.base = offset;
  }

  /**
   * The records from `from` up to `to` (below `durableEnd`), at least one and, past the first, while their values
   * hold fewer than `maxChars`: from memory at once, or a promise when some must be read back from the log.
   */
  read(from: number, to: number, maxChars: number): RawMessage[] | Promise<RawMessage[]> {
    const out: RawMessage[] = [];
    let chars = 0;
    for (let o = from; o < to && (out.length === 0 || chars < maxChars); o++) {
      const e = this.mem[this.head + o - this.base];
      if (e === undefined) return this.readSpilled(out, o, to, chars, maxChars);
      out.push({ key: e.key, value: e.value, offset: String(o) });
      chars += e.value.length;
    }
    return out;
  }

  private async readSpilled(out: RawMessage[], from: number, to: number, chars: number, maxChars: number): Promise<RawMessage[]> {
    for (let o = from; o < to && (out.length === 0 || chars < maxChars); ) {
      const e = this.mem[this.head + o - this.base];
      if (e !== undefined) {
        out.push({ key: e.key, value: e.value, offset: String(o) });
        chars += e.value.length;
        o++;
        continue;
      }
      // a run of records on disk only, read with one positional read (records of one log lie in offset order)
      const places: Place[] = [];
      for (let r = o; r < to && (out.length + places.length === 0 || chars < maxChars); r++) {
        const i = this.head + r - this.base;
        if (this.mem[i] !== undefined) break;
        const place = { pos: this.pos[i] as number, len: this.len[i] as number };
        places.push(place);
        chars += place.len;
      }
      const records = await this.readRun(o, places);
      for (const r of records) out.push(r);
      o += places.length;
    }
    return out;
  }

  /** Records `from`, `from + 1`, … whose JSON is at `places`, read back from the log. */
  private async readRun(from: number, places: Place[]): Promise<RawMessage[]> {
    const first = places[0] as Place;
    const last = places[places.length - 1] as Place;
    const buf = Buffer.allocUnsafe(last.pos + last.len - first.pos);
    const fh = await open((this.log as AppendLog).path, "r");
    try {
      for (let at = 0; at < buf.length; ) {
        const { bytesRead } = await fh.read(buf, at, buf.length - at, first.pos + at);
        if (bytesRead === 0) throw new Error(`${(this.log as AppendLog).path}: ended at ${first.pos + at} before offset ${from + places.length - 1}'s record`);
        at += bytesRead;
      }
    } finally {
      await fh.close();
    }
    if (this.budget) {
      this.budget.spilledReads++;
      this.budget.spilledRecords += places.length;
    }
    return places.map((p, n) => {
      const offset = from + n;
      const rec = this.parse(buf.toString("utf8", p.pos - first.pos, p.pos - first.pos + p.len));
      if (rec.o !== offset) throw new Error(`${(this.log as AppendLog).path}: record at ${p.pos} holds offset ${rec.o}, not ${offset}`);
      return { key: rec.k, value: rec.v, offset: String(offset) };
    });
  }

  /** Set by the bus: reads a record's JSON. */
  parse: RecordParser = (json) => JSON.parse(json) as { o: number; k: string; v: string };

  private grow(): void {
    const cap = Math.max(INITIAL_CAPACITY, this.pos.length * 2);
    const pos = new Float64Array(cap);
    pos.set(this.pos);
    this.pos = pos;
    const len = new Uint32Array(cap);
    len.set(this.len);
    this.len = len;
  }

  /** Moves the retained records to the front of the arrays. */
  private pack(): void {
    const h = this.head;
    const n = this.count;
    this.mem.copyWithin(0, h, h + n);
    this.mem.length = n;
    if (this.log) {
      if (this.pos.length > 4 * Math.max(n, INITIAL_CAPACITY)) {
        // a long queue drained: give its arrays back
        const cap = 2 * Math.max(n, INITIAL_CAPACITY);
        this.pos = this.pos.slice(h, h + cap);
        this.len = this.len.slice(h, h + cap);
      } else {
        this.pos.copyWithin(0, h, h + n);
        this.len.copyWithin(0, h, h + n);
      }
    }
    this.head = 0;
  }
}
