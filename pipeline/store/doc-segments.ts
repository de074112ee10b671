// The embedded store's documents, in segment files: DATA_DIR/store/documents/000001.jsonl, 000002.jsonl, … Appends go
// to the newest (current) segment, which rolls to a new one past a size or an age. A segment is deleted whole once no
// live crawl (or single scrape) has a document in it, so the disk of expired crawls is given back while Trawl runs,
// without pausing the writers and without rewriting live records (one documents.jsonl could only be compacted at a
// start). `store/documents.jsonl` of a release before segments (data format 3 and earlier) is read as segment 0: it is
// never appended to, and it is deleted as a whole like the others once its crawls have expired.
// Beside each segment, NNNNNN.ids lists the crawls with a document in it (one id a line, written before the document):
// a start reads those instead of every document. A segment without one (written by an earlier release) is scanned.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { unlink } from "node:fs/promises";
import { join } from "node:path";
import { AppendLog, FileReader, readLines, repairTail, type LogRecord } from "../runtime/append-log.ts";
import { sizeOf as sizeOrZero } from "./embedded-journal.ts";

/** A segment rolls to a new one once it holds this many bytes… */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
/** …or once it has been the current segment this long (a slow store still gives back expired crawls' disk). */
export const SEGMENT_AGE_MS = 60 * 60 * 1000;

/** Read handles kept open at most (least recently used closed first): a large store has thousands of segments. */
const MAX_READERS = 64;

export interface SegmentOptions {
  segmentBytes?: number;
  segmentAgeMs?: number;
  /** read handles kept open at most (MAX_READERS) */
  maxReaders?: number;
}

interface Segment {
  id: number;
  path: string;
  /** the crawl (or scrape) ids with a document in the segment */
  readonly ids: Set<string>;
  /** its .ids file (the same ids) */
  idsPath: string;
  /** false: the segment has documents and no .ids file (its ids are known once it is scanned) */
  listed: boolean;
  reader: FileReader | null;
  /** reads in flight through `reader` (a handle is closed only when none is) */
  reading: number;
  /** resolves once the segment's log is closed (every write to it done): set when it stops being current */
  closed: Promise<void> | null;
}

const LEGACY = 0;
const sizeSync = (path: string): number => (existsSync(path) ? statSync(path).size : 0);
const name = (id: number) => `${String(id).padStart(6, "0")}.jsonl`;

export class DocSegments {
  private readonly dir: string;
  private readonly legacyPath: string;
  private readonly segmentBytes: number;
  private readonly segmentAgeMs: number;
  private readonly maxReaders: number;
  private readonly segments = new Map<number, Segment>();
  /** the segments with an open read handle, least recently read first */
  private readonly readers = new Set<Segment>();
  private current: { seg: Segment; log: AppendLog; since: number };
  /** Bytes of torn last records dropped when the segments were opened (a crash in the middle of a write). */
  readonly repairedBytes: number = 0;

  /** Opens the segments of `storeDir` (each torn tail repaired) and a new current one, opened at `now`. */
  constructor(storeDir: string, now: number, opts: SegmentOptions = {}) {
    this.dir = join(storeDir, "documents");
    this.legacyPath = join(storeDir, "documents.jsonl");
    this.segmentBytes = opts.segmentBytes ?? SEGMENT_BYTES;
    this.segmentAgeMs = opts.segmentAgeMs ?? SEGMENT_AGE_MS;
    this.maxReaders = opts.maxReaders ?? MAX_READERS;
    mkdirSync(this.dir, { recursive: true });
    const ids = readdirSync(this.dir)
      .filter((f) => /^\d{6,}\.jsonl$/.test(f))
      .map((f) => Number(f.slice(0, -".jsonl".length)))
      .sort((a, b) => a - b);
    // every segment is repaired: a crash right after a roll may have left the previous one's last write torn
    let repaired = repairTail(this.legacyPath);
    this.add(LEGACY, this.legacyPath);
    for (const id of ids) {
      repaired += repairTail(this.pathOf(id));
      this.add(id, this.pathOf(id));
    }
    this.repairedBytes = repaired;
    // appends go to a new segment unless the newest is empty: restarts more often than SEGMENT_AGE_MS cannot keep a
    // segment current for ever, and a segment that is not current is never written again
    const last = ids.at(-1) ?? 0;
    const seg = last > 0 && statSync(this.pathOf(last)).size === 0 ? (this.segments.get(last) as Segment) : this.add(last + 1, this.pathOf(last + 1));
    this.current = { seg, log: new AppendLog(seg.path), since: now };
    for (const s of this.segments.values()) if (s !== seg) s.closed = Promise.resolve();
  }

  private pathOf(id: number): string {
    return join(this.dir, name(id));
  }

  private add(id: number, path: string): Segment {
    const idsPath = path.replace(/\.jsonl$/, ".ids");
    const listed = existsSync(idsPath) || sizeSync(path) === 0;
    const ids = existsSync(idsPath) ? readFileSync(idsPath, "utf8").split("\n").filter(Boolean) : [];
    const seg: Segment = { id, path, ids: new Set(ids), idsPath, listed, reader: null, reading: 0, closed: null };
    this.segments.set(id, seg);
    return seg;
  }

  /** Every record from `from` on (every record without), in the order written, with the segment it is in. */
  async *records(onDamaged?: (pos: number, bytes: number) => void, from = { seg: LEGACY, pos: 0 }): AsyncGenerator<LogRecord & { seg: number }> {
    for (const seg of [...this.segments.values()].sort((a, b) => a.id - b.id)) {
      if (seg.id < from.seg) continue;
      for await (const r of readLines(seg.path, onDamaged, undefined, seg.id === from.seg ? from.pos : 0)) yield { ...r, seg: seg.id };
    }
  }

  /** The first segment whose crawl ids are not listed (none: null): a start reads its records. */
  firstUnlisted(): number | null {
    const ids = [...this.segments.values()].filter((s) => !s.listed).map((s) => s.id);
    return ids.length ? Math.min(...ids) : null;
  }

  /** Where the next append goes: every record before it is written or queued. */
  end(): { seg: number; pos: number } {
    return { seg: this.current.seg.id, pos: this.current.log.size };
  }

  /** Records that `crawlId` has a document in segment `seg` (its file is kept while the crawl lives). */
  note(seg: number, crawlId: string): void {
    const s = this.segments.get(seg);
    if (!s || s.ids.has(crawlId)) return;
    s.ids.add(crawlId);
    appendFileSync(s.idsPath, `${crawlId}\n`);
  }

  /** Marks a scanned segment's ids as listed. */
  listed(seg: number): void {
    const s = this.segments.get(seg);
    if (!s || s.listed) return;
    appendFileSync(s.idsPath, "");
    s.listed = true;
  }

  /** Segment ids, oldest first. */
  ids(): number[] {
    return [...this.segments.keys()].sort((a, b) => a - b);
  }

  /**
   * Appends documents of the crawls `crawlIds` to the current segment (rolling first if it is full); returns the
   * segment, each record's position in it, and when the lines are written.
   */
  append(lines: string[], crawlIds: Iterable<string>, now: number): { seg: number; positions: number[]; written: Promise<void> } {
    if (this.current.log.size >= this.segmentBytes) this.roll(now);
    const { seg, log } = this.current;
    for (const id of crawlIds) this.note(seg.id, id); // before the write: a sweep (or a start after a crash) keeps the segment
    const { positions, written } = log.append(lines);
    return { seg: seg.id, positions, written };
  }

  /** Starts a new current segment; the old one is closed once its queued writes are done. */
  private roll(now: number): void {
    const old = this.current;
    const seg = this.add(old.seg.id + 1, this.pathOf(old.seg.id + 1));
    this.current = { seg, log: new AppendLog(seg.path), since: now };
    old.seg.closed = old.log.close();
  }

  /** The document bytes [pos, pos + len) of segment `seg`. */
  async read(seg: number, pos: number, len: number): Promise<Buffer> {
    const s = this.segments.get(seg);
    if (!s) throw new Error(`embedded store: document segment ${seg} was deleted`);
    this.readers.delete(s);
    this.readers.add(s);
    if (!s.reader) await this.closeIdleReaders(s);
    s.reader ??= new FileReader(s.path);
    const reader = s.reader;
    s.reading++;
    try {
      return await reader.read(pos, len);
    } finally {
      s.reading--;
    }
  }

  /** Closes the least recently read handles past MAX_READERS (not `keep`'s, nor one being read). */
  private async closeIdleReaders(keep: Segment): Promise<void> {
    for (const seg of this.readers) {
      if (this.readers.size <= this.maxReaders) return;
      if (seg === keep || seg.reading > 0) continue;
      this.readers.delete(seg);
      const reader = seg.reader;
      seg.reader = null;
      await reader?.reset();
    }
  }

  /**
   * Rolls the current segment when it is older than the age limit and not empty, then deletes every other segment in
   * which no crawl `live` accepts has a document; returns the bytes given back.
   */
  async reclaim(now: number, live: (crawlId: string) => boolean): Promise<number> {
    if (this.current.log.size > 0 && now - this.current.since >= this.segmentAgeMs) this.roll(now);
    let freed = 0;
    for (const seg of [...this.segments.values()]) {
      if (seg === this.current.seg || [...seg.ids].some(live)) continue;
      this.segments.delete(seg.id);
      this.readers.delete(seg);
      await seg.closed;
      // a read in flight (of a crawl that has just expired) still ends well: FileHandle.close waits for it
      await seg.reader?.reset();
      const size = await sizeOrZero(seg.path);
      for (const p of [seg.path, seg.idsPath]) {
        await unlink(p).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOENT") throw err;
        });
      }
      freed += size;
    }
    return freed;
  }

  async close(): Promise<void> {
    for (const seg of this.segments.values()) await seg.reader?.reset();
    await this.current.log.close();
    for (const seg of this.segments.values()) await seg.closed;
  }
}

