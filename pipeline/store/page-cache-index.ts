// Where each entry of the embedded page cache's file (cache.jsonl) is: store/cache.idx holds one 40-byte row per entry
// written (the key's 128-bit prefix, position, length, time), in the order written. Memory holds a hash table of row
// numbers (8 bytes a slot, at most 16 bytes an entry), built from the rows the first time the cache is used, not at
// start. Two keys sharing a 32-bit tag are told apart by their rows' keys (read from disk); `get` of the cache
// compares the whole key it reads back, so two keys sharing the 128-bit prefix could only make a miss, never a wrong page.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { FRAME_BYTES } from "../runtime/append-log.ts";

export const CACHE_ROW_BYTES = 40;

export interface CacheRef {
  pos: number;
  len: number;
  storedAt: number;
}

const HEX_KEY = /^[0-9a-f]{64}$/;

/** A key's 16 indexed bytes: the first half of a 64-hex-digit key (`pageCacheKey`), or the MD5 of another one. */
export function keyPrefix(key: string): Buffer {
  return HEX_KEY.test(key) ? Buffer.from(key.slice(0, 32), "hex") : createHash("md5").update(key).digest();
}

const MAX_LOAD = 0.75;
/** Rows read at a time when the table is built or the rows scanned. */
const SCAN_ROWS = 16_384;

export class CacheIndex {
  private readonly path: string;
  private fd: number;
  private rows = 0;
  /** [tag, row + 1] per slot (row + 1 = 0: empty); null until first used */
  private slots: Uint32Array | null = null;
  private used = 0;

  /** Opens the rows, cutting a torn last one (a crash in the middle of its write: its entry is indexed again). */
  constructor(path: string) {
    this.path = path;
    this.fd = openSync(path, "a+");
    const size = fstatSync(this.fd).size;
    if (size % CACHE_ROW_BYTES !== 0) ftruncateSync(this.fd, size - (size % CACHE_ROW_BYTES));
    this.rows = Math.floor(size / CACHE_ROW_BYTES);
  }

  get size(): number {
    return this.rows;
  }

  /** Bytes of memory held (the hash table). */
  get memoryBytes(): number {
    return this.slots?.byteLength ?? 0;
  }

  private read(from: number, count: number): Buffer {
    const n = Math.max(0, Math.min(count, this.rows - from));
    const buf = Buffer.allocUnsafe(n * CACHE_ROW_BYTES);
    for (let done = 0; done < buf.length; ) {
      const got = readSync(this.fd, buf, done, buf.length - done, from * CACHE_ROW_BYTES + done);
      if (got === 0) throw new Error(`page cache: ${this.path} is shorter than its ${this.rows} rows`);
      done += got;
    }
    return buf;
  }

  /** Row i: its entry's place and time. */
  row(i: number): CacheRef {
    const b = this.read(i, 1);
    return { pos: b.readDoubleLE(16), storedAt: b.readDoubleLE(24), len: b.readUInt32LE(32) };
  }

  /** The end of the last indexed entry's line in the cache file (0 without rows): entries after it are not indexed. */
  covered(): number {
    if (this.rows === 0) return 0;
    const r = this.row(this.rows - 1);
    return r.pos + r.len + FRAME_BYTES + 1;
  }

  /** The first row stored at or after `at` (rows are written about in time order: a binary search). */
  firstAtOrAfter(at: number): number {
    let lo = 0;
    let hi = this.rows;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.row(mid).storedAt < at) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Row i's 40 bytes. */
  rawRow(i: number): Buffer {
    return this.read(i, 1);
  }

  /** The newest row of a key (or of its 16 indexed bytes), or null. */
  get(key: string | Buffer): (CacheRef & { row: number }) | null {
    const k = typeof key === "string" ? keyPrefix(key) : key;
    const at = this.probe(this.table(), k);
    const row = (this.slots as Uint32Array)[at + 1] as number;
    return row === 0 ? null : { ...this.row(row - 1), row: row - 1 };
  }

  /** Indexes entries just written to the cache file (their rows appended, in order). */
  append(entries: (CacheRef & { key: string })[]): void {
    if (entries.length === 0) return;
    const buf = Buffer.alloc(entries.length * CACHE_ROW_BYTES);
    entries.forEach((e, i) => {
      const at = i * CACHE_ROW_BYTES;
      keyPrefix(e.key).copy(buf, at);
      buf.writeDoubleLE(e.pos, at + 16);
      buf.writeDoubleLE(e.storedAt, at + 24);
      buf.writeUInt32LE(e.len, at + 32);
    });
    for (let done = 0; done < buf.length; ) done += writeSync(this.fd, buf, done, buf.length - done);
    const first = this.rows;
    this.rows += entries.length;
    if (this.slots) for (let i = 0; i < entries.length; i++) this.place(buf.subarray(i * CACHE_ROW_BYTES, (i + 1) * CACHE_ROW_BYTES), first + i);
  }

  /** Calls `each` with every row's bytes and number. */
  scan(each: (row: Buffer, i: number) => void): void {
    for (let from = 0; from < this.rows; from += SCAN_ROWS) {
      const buf = this.read(from, SCAN_ROWS);
      for (let at = 0; at < buf.length; at += CACHE_ROW_BYTES) each(buf.subarray(at, at + CACHE_ROW_BYTES), from + at / CACHE_ROW_BYTES);
    }
  }

  /** Replaces every row (after the cache file was compacted): `rows` holds them, in order. */
  replace(rows: Buffer): void {
    writeFileSync(`${this.path}.tmp`, rows);
    renameSync(`${this.path}.tmp`, this.path);
    closeSync(this.fd);
    this.fd = openSync(this.path, "a+");
    this.rows = rows.length / CACHE_ROW_BYTES;
    this.slots = null;
    this.used = 0;
  }

  close(): void {
    closeSync(this.fd);
  }

  private table(): Uint32Array {
    if (this.slots) return this.slots;
    this.slots = new Uint32Array(2 * Math.max(64, Math.ceil(this.rows / MAX_LOAD) + 1));
    this.scan((row, i) => this.place(row, i));
    return this.slots;
  }

  /** Points the row's key at row i, unless the key's row there is newer. */
  private place(row: Buffer, i: number): void {
    let slots = this.table();
    const k = row.subarray(0, 16);
    let at = this.probe(slots, k);
    const prev = slots[at + 1] as number;
    if (prev !== 0) {
      if (this.row(prev - 1).storedAt <= row.readDoubleLE(24)) slots[at + 1] = i + 1;
      return;
    }
    if (this.used + 1 > MAX_LOAD * (slots.length / 2)) {
      this.grow();
      slots = this.slots as Uint32Array;
      at = this.probe(slots, k);
    }
    slots[at] = k.readUInt32LE(0);
    slots[at + 1] = i + 1;
    this.used++;
  }

  /** The slot (word index) of the key's row, or the empty one where it would go. */
  private probe(slots: Uint32Array, k: Buffer): number {
    const tag = k.readUInt32LE(0);
    const n = slots.length / 2;
    const key = Buffer.allocUnsafe(16);
    for (let i = tag % n; ; i = i + 1 === n ? 0 : i + 1) {
      const row = slots[2 * i + 1] as number;
      if (row === 0) return 2 * i;
      if (slots[2 * i] !== tag) continue;
      readSync(this.fd, key, 0, 16, (row - 1) * CACHE_ROW_BYTES);
      if (key.equals(k)) return 2 * i;
    }
  }

  private grow(): void {
    const old = this.slots as Uint32Array;
    const slots = new Uint32Array(2 * Math.ceil((old.length / 2) * 1.5));
    const n = slots.length / 2;
    for (let j = 0; j < old.length; j += 2) {
      if (old[j + 1] === 0) continue;
      let i = (old[j] as number) % n;
      while (slots[2 * i + 1] !== 0) i = i + 1 === n ? 0 : i + 1;
      slots[2 * i] = old[j] as number;
      slots[2 * i + 1] = old[j + 1] as number;
    }
    this.slots = slots;
  }
}
