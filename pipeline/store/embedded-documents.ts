// The embedded store's documents (embedded-crawl-store.ts holds everything else): documents/*.jsonl segments
// (doc-segments.ts) hold them on disk, index/ a row per document of each crawl (doc-index.ts, read by position; memory
// holds a crawl's key fingerprints only while it is written to). index/mark says up to where every document is indexed:
// at a start only those written after it (a crash's last moments) are read and indexed again. Without a directory
// (memory-only store) the documents' text is kept in memory and the indexes in growable buffers.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { DocumentKeys, DocumentPage, DocumentRow } from "./crawl-store.ts";
import { DocSegments, type SegmentOptions } from "./doc-segments.ts";
import { fitChunk } from "./paging.ts";
import { DocIndex, FdPool, type DocRef, type DocRow } from "./doc-index.ts";

/** Rows of one segment at most this far apart are read together (the bytes between are read and dropped)… */
const READ_GAP_BYTES = 64 * 1024;
/** …in reads of at most this many bytes. */
const READ_RUN_BYTES = 16 * 1024 * 1024;
/** Index rows read for one page at most (a page is cut to its byte budget after). */
const MAX_PAGE_ROWS = 10_000;

export class EmbeddedDocuments {
  private readonly log: DocSegments | null;
  /** the newest `now` the store was told (at open and by each sweep): when a full segment rolls */
  private now: number;
  private readonly indexes = new Map<string, DocIndex>();
  private readonly fds = new FdPool();
  /** where index/ is (null: memory only) */
  private readonly indexDir: string | null;
  private markFd: number | null = null;
  /** the segment place of each insert whose documents are being written, oldest first (the mark stays before them) */
  private readonly unindexed: { seg: number; pos: number }[] = [];
  /** memory-only mode keeps documents here */
  private readonly memDocs = new Map<string, string[]>();

  /** `storeDir`: the store's directory (null: memory only). */
  constructor(storeDir: string | null, now: number, opts: SegmentOptions) {
    this.now = now;
    this.log = storeDir ? new DocSegments(storeDir, now, opts) : null;
    this.indexDir = storeDir ? join(storeDir, "index") : null;
  }

  /**
   * Opens the indexes on disk of the crawls `kept` accepts (deleting the others') and indexes the documents the index
   * may lack (see indexDocuments). `damaged` counts records whose checksum failed.
   */
  async load(kept: (crawlId: string) => boolean, damaged: () => void): Promise<void> {
    this.openIndexes(kept);
    await this.indexDocuments(kept, damaged);
  }

  private indexPaths(id: string): { idx: string; keys: string } {
    const base = join(this.indexDir as string, Buffer.from(id, "utf8").toString("base64url"));
    return { idx: `${base}.idx`, keys: `${base}.keys` };
  }

  /** The indexes on disk of the crawls the journal knows (and single scrapes'), without reading them. */
  private openIndexes(kept: (crawlId: string) => boolean): void {
    if (!this.indexDir) return;
    mkdirSync(this.indexDir, { recursive: true });
    for (const f of readdirSync(this.indexDir)) {
      if (!f.endsWith(".idx")) continue;
      const id = Buffer.from(f.slice(0, -".idx".length), "base64url").toString("utf8");
      const index = new DocIndex(this.indexPaths(id), this.fds);
      if (kept(id)) this.indexes.set(id, index);
      else index.remove(); // a crawl that expired
    }
  }

  /** Where every document before is indexed (null: unknown, read them all). */
  private readMark(): { seg: number; pos: number } | null {
    const path = join(this.indexDir as string, "mark");
    try {
      const m = JSON.parse(readFileSync(path, "utf8").trim()) as { seg?: unknown; pos?: unknown };
      return typeof m.seg === "number" && typeof m.pos === "number" ? { seg: m.seg, pos: m.pos } : null;
    } catch {
      return null;
    }
  }

  /** Records that every document before `at` is indexed (a fixed-width overwrite: never a torn mark that parses). */
  private writeMark(at: { seg: number; pos: number }): void {
    if (!this.indexDir) return;
    this.markFd ??= openSync(join(this.indexDir, "mark"), existsSync(join(this.indexDir, "mark")) ? "r+" : "w+");
    const text = JSON.stringify(at).padEnd(63, " ") + "\n";
    writeSync(this.markFd, text, 0, "latin1");
  }

  /**
   * Indexes the documents written after the mark (a crash's last writes, which the index may lack) and those of
   * segments an earlier release wrote (no .ids file beside them, no index): the first start after an upgrade reads
   * every document once, later starts read at most the last moments before a crash.
   */
  private async indexDocuments(kept: (crawlId: string) => boolean, damaged: () => void): Promise<void> {
    if (!this.log) return;
    const mark = this.readMark() ?? { seg: 0, pos: 0 };
    const unlisted = this.log.firstUnlisted();
    const from = unlisted !== null && unlisted <= mark.seg ? { seg: unlisted, pos: 0 } : mark;
    const pending = new Map<string, DocRef[]>();
    const lastOf = new Map<string, { seg: number; pos: number }>();
    const flush = (id: string) => {
      const refs = pending.get(id);
      if (refs?.length) this.indexOf(id).add(refs);
      pending.delete(id);
    };
    for await (const { line, pos, len, bytes, seg } of this.log.records(damaged, from)) {
      let head: { c: string; s: number; k: string; f?: string; t?: number; sc?: number };
      try {
        head = JSON.parse(line.slice(0, line.indexOf(',"d":')) + "}");
        JSON.parse(line);
      } catch {
        continue;
      }
      if (!kept(head.c)) continue; // a crawl that expired
      this.log.note(seg, head.c);
      const last = lastOf.get(head.c) ?? this.indexOf(head.c).last();
      if (seg < last.seg || (seg === last.seg && pos <= last.pos)) continue; // indexed before the crash
      lastOf.set(head.c, { seg, pos });
      const docStart = bytes.indexOf(',"d":') + 5; // counted in the file's bytes (the marker is ASCII: its first match is the string's)
      const refs = pending.get(head.c) ?? [];
      refs.push({ seq: head.s, urlKey: head.k, finalKey: head.f ?? head.k, seg, pos, len, docStart, storedAt: head.t, statusCode: head.sc ?? 200 });
      pending.set(head.c, refs);
      if (refs.length >= 4096) flush(head.c);
    }
    for (const id of [...pending.keys()]) flush(id);
    for (const seg of this.log.ids()) if (seg >= from.seg) this.log.listed(seg);
    for (const index of this.indexes.values()) index.release(); // fingerprints are loaded again by the crawls written to
    this.writeMark(this.log.end());
  }

  private indexOf(crawlId: string): DocIndex {
    let index = this.indexes.get(crawlId);
    if (!index) {
      index = new DocIndex(this.indexDir ? this.indexPaths(crawlId) : null, this.fds);
      this.indexes.set(crawlId, index);
    }
    return index;
  }

  /** Each crawl's (and single scrape's) index. */
  entries(): IterableIterator<[string, DocIndex]> {
    return this.indexes.entries();
  }

  async insert(rows: DocumentRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (!this.log) {
      for (const r of rows) {
        const list = this.memDocs.get(r.crawlId) ?? [];
        if (this.indexOf(r.crawlId).add([{ seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, seg: 0, pos: list.length, len: 0, docStart: 0, storedAt: r.storedAt, statusCode: r.statusCode }]) > 0) list.push(r.doc);
        this.memDocs.set(r.crawlId, list);
      }
      return;
    }
    const lines = rows.map((r) => `${JSON.stringify({ c: r.crawlId, s: r.seq, k: r.urlKey, f: r.finalKey, t: r.storedAt, sc: r.statusCode }).slice(0, -1)},"d":${r.doc}}`);
    const { seg, positions, written } = this.log.append(lines, new Set(rows.map((r) => r.crawlId)), this.now);
    const place = { seg, pos: positions[0] as number };
    this.unindexed.push(place);
    try {
      await written;
      const refs = new Map<string, DocRef[]>();
      rows.forEach((r, i) => {
        const line = lines[i] as string;
        const docStart = Buffer.byteLength(line.slice(0, line.indexOf(',"d":') + 5));
        const list = refs.get(r.crawlId) ?? [];
        list.push({ seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, seg, pos: positions[i] as number, len: Buffer.byteLength(line), docStart, storedAt: r.storedAt, statusCode: r.statusCode });
        refs.set(r.crawlId, list);
      });
      for (const [crawlId, list] of refs) this.indexOf(crawlId).add(list);
      // an insert that failed (its documents' write or its rows') keeps its place: the mark stays before it, and the
      // next start indexes what of it reached the segments (its keys may be on disk already, read as stored)
      this.unindexed.splice(this.unindexed.indexOf(place), 1);
    } finally {
      // every document before the oldest insert still being written (or failed) is indexed (all of them when none is)
      this.writeMark(this.unindexed[0] ?? this.log.end());
    }
  }

  async keys(crawlId: string): Promise<DocumentKeys> {
    const index = this.indexes.get(crawlId);
    if (!index) return { nextSeq: 0, keys: [], seqs: [], finalKeys: [] };
    const out: DocumentKeys = { nextSeq: 0, keys: [], seqs: [], finalKeys: [] };
    const seen = new Set<string>(); // a key written twice by a crash between its key and its row: once
    for (const [key, finalKey, seq] of await index.keys()) {
      if (seen.has(key)) continue;
      seen.add(key);
      out.keys.push(key);
      out.seqs.push(seq);
      out.finalKeys.push(finalKey);
      out.nextSeq = Math.max(out.nextSeq, seq + 1);
    }
    return out;
  }

  /** The documents of index rows, each row's JSON text (neighbouring rows of a segment read at once). */
  async read(crawlId: string, rows: DocRow[]): Promise<string[]> {
    if (!this.log) {
      const list = this.memDocs.get(crawlId) ?? [];
      return rows.map((r) => list[r.pos] as string);
    }
    const log = this.log;
    const out: string[] = [];
    for (let i = 0; i < rows.length; ) {
      const start = rows[i] as DocRow;
      let j = i + 1;
      let end = start.pos + start.len;
      // rows of one segment that sit close together: one read
      for (; j < rows.length; j++) {
        const r = rows[j] as DocRow;
        if (r.seg !== start.seg || r.pos < end || r.pos - end > READ_GAP_BYTES || r.pos + r.len - start.pos > READ_RUN_BYTES) break;
        end = r.pos + r.len;
      }
      const bytes = await log.read(start.seg, start.pos, end - start.pos);
      for (let k = i; k < j; k++) {
        const r = rows[k] as DocRow;
        out.push(bytes.toString("utf8", r.pos - start.pos + r.docStart, r.pos - start.pos + r.len - 1));
      }
      i = j;
    }
    return out;
  }

  async page(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    const index = this.indexes.get(crawlId);
    if (!index) return { docs: [], nextSkip: skip, more: false };
    const first = index.firstAtLeast(skip);
    const rows = index.range(first, Math.min(maxDocs, MAX_PAGE_ROWS) + 1);
    // a document's JSON is [docStart, len - 1) of its line (the closing brace is the line's): its size is known here
    const sizes = rows.map((r) => (this.log ? r.len - r.docStart - 1 : -1));
    const take = this.log ? fitChunk(sizes.slice(0, maxDocs), maxBytes, maxDocs) : await this.fitMemory(crawlId, rows, maxBytes, maxDocs);
    if (take === 0) return { docs: [], nextSkip: skip, more: false };
    const docs = await this.read(crawlId, rows.slice(0, take));
    return { docs, nextSkip: (rows[take - 1] as DocRow).seq + 1, more: rows.length > take };
  }

  private async fitMemory(crawlId: string, rows: DocRow[], maxBytes: number, maxDocs: number): Promise<number> {
    const texts = await this.read(crawlId, rows.slice(0, maxDocs));
    return fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs);
  }

  async scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined> {
    const index = this.indexes.get(jobId);
    // a row written before documents carried their time reads as fresh (the sweep keeps it too)
    if (!index || index.size === 0 || index.storedAtOf(0, storedSince) < storedSince) return undefined;
    return (await this.read(jobId, [index.row(0)]))[0];
  }

  /** Drops a crawl's index and (memory only) its documents; its segments go at the next reclaim. */
  forget(id: string): void {
    this.indexes.get(id)?.remove();
    this.indexes.delete(id);
    this.memDocs.delete(id);
  }

  /** Deletes the segments left without a kept crawl's document (and notes `now` for when a full segment rolls). */
  async reclaim(now: number): Promise<void> {
    this.now = Math.max(this.now, now);
    await this.log?.reclaim(now, (id) => this.indexes.has(id));
  }

  /** Bytes of torn last records dropped when the segments were opened. */
  get repairedBytes(): number {
    return this.log?.repairedBytes ?? 0;
  }

  async close(): Promise<void> {
    await this.log?.close();
    if (this.log && this.unindexed.length === 0) this.writeMark(this.log.end());
    if (this.markFd !== null) closeSync(this.markFd);
    this.markFd = null;
    this.fds.closeAll();
  }
}
