// The embedded store's index of one crawl's documents (where each sits in the document segments), on disk:
// store/index/<id>.idx holds one fixed-width row per stored document in seq order (read by position, binary search on
// seq), store/index/<id>.keys its URL keys (framed JSON lines, read only when the sink resumes a crawl). Memory keeps
// the row count and, while the crawl is written to, a fingerprint set of its keys (fingerprint-set.ts, at most 16
// bytes a document): a restart reads nothing of a crawl before it is asked for. Without a directory (memory-only
// store) the same rows live in a growable buffer.
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { frame, readLines, repairTail } from "../runtime/append-log.ts";
import { fingerprint, FingerprintSet } from "./fingerprint-set.ts";

export interface DocRef {
  storedAt?: number;
  statusCode?: number;
  seq: number;
  urlKey: string;
  finalKey: string;
  /** the segment file the document is in (doc-segments.ts) */
  seg: number;
  pos: number;
  len: number;
  /** the document's JSON sits at [pos + docStart, pos + len) of its line */
  docStart: number;
}

/** One row of the index: a DocRef without its keys. storedAt NaN: not recorded (lines written before documents carried it). */
export interface DocRow {
  seq: number;
  seg: number;
  pos: number;
  len: number;
  docStart: number;
  storedAt: number;
  statusCode: number;
}

/** Bytes of one row: seq, pos, storedAt (f64); fingerprint (2 × u32); seg, len, docStart, statusCode (u32). */
export const ROW_BYTES = 48;

/** Open file descriptors shared by every index of a store, least recently used closed first past `max`. */
export class FdPool {
  private readonly fds = new Map<string, number>();
  private readonly max: number;

  constructor(max = 128) {
    this.max = max;
  }

  fd(path: string): number {
    let fd = this.fds.get(path);
    if (fd !== undefined) {
      this.fds.delete(path);
      this.fds.set(path, fd);
      return fd;
    }
    fd = openSync(path, "a+");
    this.fds.set(path, fd);
    for (const [p, old] of this.fds) {
      if (this.fds.size <= this.max) break;
      this.fds.delete(p);
      closeSync(old);
    }
    return fd;
  }

  close(path: string): void {
    const fd = this.fds.get(path);
    if (fd === undefined) return;
    this.fds.delete(path);
    closeSync(fd);
  }

  closeAll(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

function encodeRow(buf: Buffer, at: number, r: DocRef, hi: number, lo: number): void {
  buf.writeDoubleLE(r.seq, at);
  buf.writeDoubleLE(r.pos, at + 8);
  buf.writeDoubleLE(r.storedAt ?? NaN, at + 16);
  buf.writeUInt32LE(hi, at + 24);
  buf.writeUInt32LE(lo, at + 28);
  buf.writeUInt32LE(r.seg, at + 32);
  buf.writeUInt32LE(r.len, at + 36);
  buf.writeUInt32LE(r.docStart, at + 40);
  buf.writeUInt32LE(r.statusCode ?? 200, at + 44);
}

function decodeRow(buf: Buffer, at: number): DocRow {
  return {
    seq: buf.readDoubleLE(at),
    pos: buf.readDoubleLE(at + 8),
    storedAt: buf.readDoubleLE(at + 16),
    seg: buf.readUInt32LE(at + 32),
    len: buf.readUInt32LE(at + 36),
    docStart: buf.readUInt32LE(at + 40),
    statusCode: buf.readUInt32LE(at + 44),
  };
}

/** Rows read at a time when the whole index is scanned (fingerprints, newest success). */
const SCAN_ROWS = 16_384;

/**
 * One crawl's stored documents in seq order (one sink per crawl assigns increasing seqs). The first row of a url key
 * wins. `paths` null: memory only.
 */
export class DocIndex {
  private rows: number;
  private readonly mem: { buf: Buffer; keys: [string, string, number][] } | null;
  /** the keys of the rows, loaded when the crawl is written to (dropped by `release`) */
  private fps: FingerprintSet | null = null;
  private success: number | null | undefined = undefined;
  private first: DocRow | null = null;
  private readonly paths: { idx: string; keys: string } | null;
  private readonly pool: FdPool;

  constructor(paths: { idx: string; keys: string } | null, pool: FdPool) {
    this.paths = paths;
    this.pool = pool;
    if (!paths) {
      this.rows = 0;
      this.mem = { buf: Buffer.alloc(ROW_BYTES * 16), keys: [] };
      return;
    }
    this.mem = null;
    this.rows = -1; // files not opened yet: a start opens none (a store may hold many single scrapes' indexes)
  }

  /** The row count, the files opened (and repaired) the first time. */
  private count(): number {
    if (this.rows >= 0) return this.rows;
    const paths = this.paths as { idx: string; keys: string };
    // counted once every step went through (an open that fails, EMFILE, is tried again by the next call)
    let rows = 0;
    if (existsSync(paths.idx)) {
      const fd = this.pool.fd(paths.idx);
      const size = fstatSync(fd).size;
      // a torn last row (a crash in the middle of its write) is cut: its document is indexed again from the segments
      if (size % ROW_BYTES !== 0) ftruncateSync(fd, size - (size % ROW_BYTES));
      rows = Math.floor(size / ROW_BYTES);
    }
    repairTail(paths.keys);
    this.rows = rows;
    return this.rows;
  }

  get size(): number {
    return this.count();
  }

  /** Bytes of memory the index holds (its fingerprints; the row buffer too when memory-only). */
  get memoryBytes(): number {
    return (this.fps?.bytes ?? 0) + (this.mem?.buf.length ?? 0);
  }

  private read(from: number, count: number): Buffer {
    const n = Math.max(0, Math.min(count, this.count() - from));
    if (this.mem) return this.mem.buf.subarray(from * ROW_BYTES, (from + n) * ROW_BYTES);
    const buf = Buffer.allocUnsafe(n * ROW_BYTES);
    let done = 0;
    const fd = this.pool.fd((this.paths as { idx: string }).idx);
    while (done < buf.length) {
      const got = readSync(fd, buf, done, buf.length - done, from * ROW_BYTES + done);
      if (got === 0) throw new Error(`embedded store: ${(this.paths as { idx: string }).idx} is shorter than its ${this.rows} rows`);
      done += got;
    }
    return buf;
  }

  /** Row i. */
  row(i: number): DocRow {
    if (i === 0 && this.first) return this.first;
    const r = decodeRow(this.read(i, 1), 0);
    if (i === 0) this.first = r;
    return r;
  }

  /** Rows [from, from + count). */
  range(from: number, count: number): DocRow[] {
    const buf = this.read(from, count);
    const out: DocRow[] = [];
    for (let at = 0; at < buf.length; at += ROW_BYTES) out.push(decodeRow(buf, at));
    return out;
  }

  /** The first row whose seq is at least `seq` (binary search over the rows on disk). */
  firstAtLeast(seq: number): number {
    let lo = 0;
    let hi = this.count();
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.row(mid).seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** when row i was stored (`absent` if not recorded) */
  storedAtOf(i: number, absent = 0): number {
    const at = this.row(i).storedAt;
    return Number.isNaN(at) ? absent : at;
  }

  /** Calls `each` with every row's buffer and offset, SCAN_ROWS at a time. */
  private scan(each: (buf: Buffer, at: number) => void): void {
    for (let from = 0; from < this.count(); from += SCAN_ROWS) {
      const buf = this.read(from, SCAN_ROWS);
      for (let at = 0; at < buf.length; at += ROW_BYTES) each(buf, at);
    }
  }

  private fingerprints(): FingerprintSet {
    if (this.fps) return this.fps;
    const fps = new FingerprintSet(this.count());
    this.scan((buf, at) => fps.add(buf.readUInt32LE(at + 24), buf.readUInt32LE(at + 28)));
    this.fps = fps;
    return fps;
  }

  /** Adds the rows of url keys not stored yet (the first row of a key wins); returns how many were added. */
  add(refs: DocRef[]): number {
    const fps = this.fingerprints();
    const buf = Buffer.allocUnsafe(refs.length * ROW_BYTES);
    const keys: [string, string, number][] = [];
    for (const r of refs) {
      const [hi, lo] = fingerprint(r.urlKey);
      if (!fps.add(hi, lo)) continue;
      encodeRow(buf, keys.length * ROW_BYTES, r, hi, lo);
      keys.push([r.urlKey, r.finalKey, r.seq]);
      if ((r.statusCode ?? 200) < 400 && r.storedAt !== undefined && this.success !== undefined) this.success = Math.max(this.success ?? -1, r.storedAt);
    }
    if (keys.length === 0) return 0;
    const rows = buf.subarray(0, keys.length * ROW_BYTES);
    if (this.mem) {
      if (this.mem.buf.length < (this.rows + keys.length) * ROW_BYTES) {
        const bigger = Buffer.alloc(Math.max(this.mem.buf.length * 2, (this.rows + keys.length) * ROW_BYTES));
        this.mem.buf.copy(bigger);
        this.mem.buf = bigger;
      }
      rows.copy(this.mem.buf, this.rows * ROW_BYTES);
      this.mem.keys.push(...keys);
    } else {
      const paths = this.paths as { idx: string; keys: string };
      // keys first: a crash between the two writes leaves a key without its row (read as a key stored, which it is)
      const lines = Buffer.from(keys.map((k) => `${frame(JSON.stringify(k))}\n`).join(""), "utf8");
      try {
        writeAll(this.pool.fd(paths.keys), lines);
        writeAll(this.pool.fd(paths.idx), rows);
      } catch (err) {
        // a failed write (ENOSPC, EIO): the fingerprints already hold these keys and the file may end in part of a
        // row; both are read again from disk at the next add (a torn row cut), so a retry indexes them
        this.fps = null;
        this.rows = -1;
        throw err;
      }
    }
    this.rows += keys.length;
    return keys.length;
  }

  /** The last row's place in the segments (-1, -1 when empty): rows are added in the order their documents were written. */
  last(): { seg: number; pos: number } {
    if (this.count() === 0) return { seg: -1, pos: -1 };
    const r = this.row(this.rows - 1);
    return { seg: r.seg, pos: r.pos };
  }

  /** Every stored key with its seq and final key, in the order stored (a key may repeat after a crash: same seq). */
  async keys(): Promise<[string, string, number][]> {
    if (this.mem) return this.mem.keys;
    this.count(); // the keys file repaired
    const out: [string, string, number][] = [];
    for await (const { line } of readLines((this.paths as { keys: string }).keys)) out.push(JSON.parse(line) as [string, string, number]);
    return out;
  }

  /** When the newest document with a status below 400 was stored (null: none), read once from disk. */
  newestSuccess(): number | null {
    if (this.success !== undefined) return this.success;
    let best = -1;
    this.scan((buf, at) => {
      const t = buf.readDoubleLE(at + 16);
      if (buf.readUInt32LE(at + 44) < 400 && !Number.isNaN(t) && t > best) best = t;
    });
    this.success = best < 0 ? null : best;
    return this.success;
  }

  /** Gives back the memory of a crawl no longer written to (its fingerprints) and its file handles. */
  release(): void {
    this.fps = null;
    if (!this.paths) return;
    this.pool.close(this.paths.idx);
    this.pool.close(this.paths.keys);
  }

  /** Deletes the index (the crawl expired). */
  remove(): void {
    this.release();
    this.rows = 0;
    if (!this.paths) return;
    for (const p of [this.paths.idx, this.paths.keys]) {
      try {
        unlinkSync(p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  }
}

function writeAll(fd: number, buf: Buffer): void {
  for (let done = 0; done < buf.length; ) done += writeSync(fd, buf, done, buf.length - done);
}
