// An append-only JSON-lines file: writes are serialised in call order; each resolves once its lines are written.
// Framing (format 2): a record is one line `<JSON>\t<CRC32 of the JSON, 8 hex digits>\n`. JSON text never holds a
// raw tab or newline, so the frame is unambiguous; a record is complete when its newline is on disk and its checksum
// matches. A crash in the middle of an append leaves a torn tail: opening the log truncates the file to its last
// complete record (also dropping a last line whose checksum fails, e.g. zeros left by a power cut), so the next
// append can never be glued onto the torn one (which was never acknowledged: its append had not resolved).
// Lines without a tab are format 1 records (data directories written before checksums) and are read as they are.
// JSON.stringify leaves U+2028 and U+2029 raw inside strings, and line splitters (node's readline) break at them and at
// a lone carriage return: records are split at the byte 0x0A alone (`readLines`), so no content can cut one in two.
import { closeSync, ftruncateSync, fstatSync, mkdirSync, openSync, readSync, write as writeFd, writeSync } from "node:fs";
import { open, rename, writeFile, type FileHandle } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { crc32 } from "node:zlib";
import { DiskPace } from "./disk-pace.ts";

const TAB = 0x09;
/** Bytes the frame adds after a record's JSON (tab and 8 hex digits), not counting the newline. */
export const FRAME_BYTES = 9;

/** One framed line (without its newline) for a record's JSON. */
export function frame(json: string): string {
  return `${json}\t${crc32(json).toString(16).padStart(8, "0")}`;
}

/** The record's JSON of a line, or null when the line is damaged (its checksum fails). Unframed (format 1) lines pass as they are. */
export function unframe(line: string): string | null {
  const tab = line.lastIndexOf("\t");
  if (tab < 0) return line;
  const json = line.slice(0, tab);
  const sum = line.slice(tab + 1);
  return sum.length === 8 && parseInt(sum, 16) === crc32(json) ? json : null;
}

/** Whether the bytes of one line (without its newline) are a whole record. */
function lineIsWhole(bytes: Buffer): boolean {
  if (bytes.length === 0) return true;
  const len = jsonLength(bytes);
  return len === bytes.length ? isJson(bytes.toString("utf8")) : len >= 0;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false; // a format 1 line cut short
  }
}

/** The position just after the last newline before `end` (0 when there is none). */
function afterLastNewline(fd: number, end: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const nl = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    end = start;
  }
  return 0;
}

/**
 * Truncates `path` to its last complete record: a tail without its newline (a torn, unacknowledged last record),
 * then any last lines whose checksum fails; returns the bytes dropped. A missing file is left missing.
 */
export function repairTail(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, "r+");
  try {
    const size = fstatSync(fd).size;
    let end = afterLastNewline(fd, size);
    while (end > 0) {
      const start = afterLastNewline(fd, end - 1);
      const line = Buffer.alloc(end - 1 - start);
      readSync(fd, line, 0, line.length, start);
      if (lineIsWhole(line)) break;
      end = start;
    }
    if (end < size) ftruncateSync(fd, end);
    return size - end;
  } finally {
    closeSync(fd);
  }
}

export class AppendLog {
  readonly path: string;
  /** The last queued write (or rewrite); writes happen one at a time, in call order. */
  private chain: Promise<void> = Promise.resolve();
  /** Appends not yet started, written together by one write call once the write before them is done. */
  private batch: { parts: Buffer[]; written: Promise<void> } | null = null;
  /** One append-mode file descriptor for the life of the log (reopened after a rewrite replaced the file). */
  private fd: number | null = null;
  /** Whether the disk's synchronous writes are slow: shared by every log on its device (see `write`). */
  private readonly pace: DiskPace;
  private readonly syncMaxBytes: number;
  private readonly slowMs: number;
  /** Write calls made on the calling thread and through the thread pool. */
  readonly writes = { sync: 0, pooled: 0 };
  /** Bytes in the file, including what is queued. */
  size = 0;
  /** A rewriteFrom is writing the new file (its size is not known yet). */
  private streaming = false;
  /** Bytes of a torn last record dropped when the log was opened (0: the file was whole). */
  readonly repairedBytes: number;

  /**
   * Opens (creates the folder of) the log, repairing a torn tail left by a crash. `repair: false` for a file that
   * another live process appends to (its tail may be a record being written right now). `syncWriteMaxBytes` and
   * `syncWriteSlowMs` change SYNC_WRITE_MAX_BYTES and SYNC_WRITE_SLOW_MS (tests).
   */
  constructor(path: string, opts: { repair?: boolean; syncWriteMaxBytes?: number; syncWriteSlowMs?: number; pace?: DiskPace } = {}) {
    this.path = path;
    this.syncMaxBytes = opts.syncWriteMaxBytes ?? SYNC_WRITE_MAX_BYTES;
    this.slowMs = opts.syncWriteSlowMs ?? SYNC_WRITE_SLOW_MS;
    mkdirSync(dirname(path), { recursive: true });
    this.pace = opts.pace ?? DiskPace.of(dirname(path));
    this.repairedBytes = opts.repair === false ? 0 : repairTail(path);
    this.size = existsSync(path) ? statSync(path).size : 0;
  }

  /**
   * Appends records (JSON texts, no raw tab or newline inside), each framed; returns the byte position of each
   * record's JSON (a positional read of the JSON's byte length at it returns the JSON). Appends made while a write
   * is in flight are written together by the next one (group commit); each resolves once its own lines are written.
   */
  append(lines: string[]): { positions: number[]; written: Promise<void> } {
    if (this.streaming) throw new Error(`${this.path}: append during a streamed rewrite (its records' positions are not known yet)`);
    const positions: number[] = [];
    const parts: Buffer[] = [];
    let at = this.size;
    // each record's JSON is encoded to UTF-8 once: its checksum, its length and the write all use those bytes
    // (framing strings cost four passes over every page: the checksum's own encoding, a byte count, a concatenation
    // and the write's encoding; 9-12 % of the event loop of an embedded crawl)
    for (const line of lines) {
      positions.push(at);
      const json = Buffer.from(line, "utf8");
      const tail = Buffer.from(`\t${crc32(json).toString(16).padStart(8, "0")}\n`, "latin1");
      at += json.length + tail.length;
      parts.push(json, tail);
    }
    this.size = at;
    if (!this.batch) {
      const batch: { parts: Buffer[]; written: Promise<void> } = { parts: [], written: Promise.resolve() };
      batch.written = this.chain.then(() => {
        if (this.batch === batch) this.batch = null; // later appends go to the next write
        return this.write(batch.parts.length === 1 ? (batch.parts[0] as Buffer) : Buffer.concat(batch.parts));
      });
      this.chain = batch.written.catch(() => undefined);
      this.batch = batch;
    }
    for (const part of parts) this.batch.parts.push(part);
    return { positions, written: this.batch.written };
  }

  /**
   * Writes a batch at the end of the file. Batches up to SYNC_WRITE_MAX_BYTES are written on the calling thread: a
   * write to the page cache takes microseconds, while a write through libuv's thread pool costs 40-130 µs of CPU more
   * (two thread hops, a wake-up of the event loop; `bench/README.md`), and an embedded crawl makes thousands. A disk
   * that makes one take longer than SYNC_WRITE_SLOW_MS (write-back throttling, a slow or network volume) sends the
   * writes of every log on that disk to the thread pool (DiskPace), so the event loop is not held by the disk.
   */
  private async write(bytes: Buffer): Promise<void> {
    const fd = (this.fd ??= openSync(this.path, "a"));
    if (bytes.length > this.syncMaxBytes || this.pace.pooled(Date.now())) {
      this.writes.pooled++;
      for (let off = 0; off < bytes.length; ) {
        off += await new Promise<number>((resolve, reject) => writeFd(fd, bytes, off, bytes.length - off, null, (err, n) => (err ? reject(err) : resolve(n))));
      }
      return;
    }
    this.writes.sync++;
    const t0 = performance.now();
    for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    this.pace.wrote(performance.now() - t0 > this.slowMs, Date.now());
  }

  /** Resolves once every queued write is done. */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Closes the file handle once every queued write is done (a later append opens it again). */
  async close(): Promise<void> {
    this.batch = null;
    await this.chain;
    await this.dropHandle();
  }

  private async dropHandle(): Promise<void> {
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) {
      try {
        closeSync(fd);
      } catch (err) {
        // already closed: nothing to report; anything else (EIO, EDQUOT: write-back errors a network volume reports
        // only at close) goes to the caller, as the file handle's close did
        if ((err as NodeJS.ErrnoException).code !== "EBADF") throw err;
      }
    }
  }

  /**
   * Replaces the whole file (after compaction) with these records, in order with the appends: the new size counts at
   * once, so appends made while it is written are placed after the new records (the embedded bus trims a partition
   * with rewrite([]) while producers keep appending).
   */
  rewrite(lines: string[]): Promise<void> {
    const framed = lines.map((l) => frame(l) + "\n");
    this.size = framed.reduce((n, f) => n + Buffer.byteLength(f), 0);
    return this.replace(framed).then(() => undefined);
  }

  /**
   * Replaces the whole file with the records `records` yields (JSON texts), streamed to a new file in 1 MB writes,
   * synced, then renamed over the old one. The records are never held together: one string of a store's kept records
   * failed past V8's longest string (~512 MB: "Invalid string length"), so an embedded store over that size with one
   * expired crawl could not start. `records` may read this log's file: the new one replaces it only at the end. Its
   * size is known only then, so no append may be made until it resolves (a log being opened): one throws.
   */
  async rewriteFrom(records: Iterable<string> | AsyncIterable<string>): Promise<void> {
    if (this.streaming) throw new Error(`${this.path}: a streamed rewrite is already running`);
    this.streaming = true;
    try {
      this.size = await this.replace((async function* () {
        for await (const json of records) yield frame(json) + "\n";
      })());
    } finally {
      this.streaming = false;
    }
  }

  /** Writes `framed` (framed lines) to a new file that replaces this one, after the queued writes; its size. */
  private replace(framed: Iterable<string> | AsyncIterable<string>): Promise<number> {
    this.batch = null; // appends after this call are written to the new file
    const done = this.chain.then(async () => {
      await this.dropHandle(); // the rename replaces the inode the handle writes to
      const fh = await open(this.path + ".tmp", "w");
      let size = 0;
      try {
        let parts: Buffer[] = [];
        let pending = 0;
        const write = async () => {
          await fh.write(Buffer.concat(parts, pending));
          size += pending;
          parts = [];
          pending = 0;
        };
        for await (const line of framed) {
          const b = Buffer.from(line);
          parts.push(b);
          pending += b.length;
          if (pending >= REWRITE_CHUNK) await write();
        }
        if (pending > 0) await write();
        await fh.sync(); // the data is on disk before the rename makes it the log (a crash never leaves an empty one)
      } finally {
        await fh.close();
      }
      await rename(this.path + ".tmp", this.path);
      return size;
    });
    this.chain = done.then(() => undefined, () => undefined);
    return done;
  }
}

/** Appended batches up to this size are written synchronously (larger ones through the thread pool). */
const SYNC_WRITE_MAX_BYTES = 1024 * 1024;
/** A synchronous write slower than this sends the disk's writes to the thread pool for a while (DiskPace). */
const SYNC_WRITE_SLOW_MS = 20;
/** Bytes a rewrite writes at a time. */
const REWRITE_CHUNK = 1024 * 1024;

/** Bytes read from a log at a time (a record longer than this grows the buffer to hold it whole). */
const READ_CHUNK = 1024 * 1024;
/** The value of each byte as a hex digit (-1: not one). */
const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 16; d++) HEX[d.toString(16).charCodeAt(0)] = HEX[d.toString(16).toUpperCase().charCodeAt(0)] = d;

/**
 * The length of the record's JSON in the bytes of one line (without its newline): the line less its frame, the whole
 * line when it is unframed (format 1), -1 when the line is damaged (its checksum fails). Works on the bytes as written,
 * so the checksum is checked without decoding the line or encoding it again.
 */
export function jsonLength(line: Buffer): number {
  const tab = line.length - FRAME_BYTES;
  if (tab >= 0 && line[tab] === TAB) {
    let sum = 0;
    for (let i = tab + 1; i < line.length; i++) {
      const d = HEX[line[i] as number] as number;
      if (d < 0) return -1;
      sum = sum * 16 + d;
    }
    return sum === crc32(line.subarray(0, tab)) ? tab : -1;
  }
  return line.lastIndexOf(TAB) >= 0 ? -1 : line.length;
}

/** One record of a log: its JSON, the byte position and byte length of the JSON in the file, and those bytes. */
export interface LogRecord {
  line: string;
  pos: number;
  len: number;
  /** The JSON's bytes: a view into the read buffer, valid only until the next record is asked for. */
  bytes: Buffer;
}

/**
 * Reads a log's records with each record's byte position and JSON length (open it as an AppendLog first: torn
 * tails are repaired there). A damaged record in the middle (its checksum fails) is skipped and reported to `onDamaged`.
 * Records are split at the byte 0x0A only (the frame's newline; JSON text holds no raw one), never at characters a
 * line splitter also breaks at (U+2028 and U+2029, which JSON.stringify leaves raw in strings, or a carriage return),
 * and positions are counted in the file's bytes. A last line without its newline is not a record (a torn write).
 * `chunkBytes`: bytes read at a time (tests use tiny ones to put read boundaries everywhere); `start`: a record's position to begin at.
 */
export async function* readLines(path: string, onDamaged?: (pos: number, bytes: number) => void, chunkBytes = READ_CHUNK, start = 0): AsyncGenerator<LogRecord> {
  let fh: FileHandle;
  try {
    fh = await open(path, "r");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let base = start; // the file position of buf[0] (`start`: the position of a record, where reading begins)
    let filled = 0; // bytes of buf read from the file
    for (;;) {
      if (filled === buf.length) {
        // a record longer than the buffer: read on after it in a buffer twice the size
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, filled, buf.length - filled, base + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      const data = buf.subarray(0, filled);
      let start = 0;
      for (let nl = data.indexOf(0x0a, start); nl >= 0; nl = data.indexOf(0x0a, start)) {
        const raw = data.subarray(start, nl);
        const pos = base + start;
        start = nl + 1;
        if (raw.length === 0) continue;
        const len = jsonLength(raw);
        if (len < 0) {
          onDamaged?.(pos, raw.length);
          continue;
        }
        yield { line: raw.toString("utf8", 0, len), pos, len, bytes: raw.subarray(0, len) };
      }
      // the start of a record that continues in the next read moves to the front of the buffer
      buf.copy(buf, 0, start, filled);
      base += start;
      filled -= start;
    }
  } finally {
    await fh.close();
  }
}

/** Positional reads of one file through one long-lived handle (reopened after the file was replaced). */
export class FileReader {
  private readonly path: string;
  private handle: Promise<FileHandle> | null = null;

  constructor(path: string) {
    this.path = path;
  }

  async read(pos: number, len: number): Promise<Buffer> {
    this.handle ??= open(this.path, "r");
    const fh = await this.handle;
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, pos);
    return buf;
  }

  /** Drop the handle (the file was rewritten: the old handle still sees the old inode). */
  async reset(): Promise<void> {
    const h = this.handle;
    this.handle = null;
    if (h) await (await h).close();
  }
}

/** Writes a small JSON file atomically. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  await writeFile(path + ".tmp", JSON.stringify(value));
  await rename(path + ".tmp", path);
}
