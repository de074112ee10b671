// The page cache behind `maxAge` / `storeInCache`: fetched responses (not documents) keyed by URL and request
// headers, so a hit is converted with the caller's own formats and options and still yields the page's links.
// Writes are best effort (a cache that cannot be written never fails a page); reads are bounded by maxAge.
// Adapters: EmbeddedPageCache (a JSON-lines file, or memory) and ClickHousePageCache (clickhouse-page-cache.ts).
import { createHash } from "node:crypto";
import { join } from "node:path";
import { AppendLog, FileReader, FRAME_BYTES, readLines } from "../runtime/append-log.ts";
import type { Logger } from "../runtime/logger.ts";

export interface CachedPage {
  key: string;
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  body: string;
  /** binary bodies (PDF) */
  bodyBase64?: string;
  storedAt: number;
}

export interface PageCache {
  /** The newest entry of `key` stored at or after `notBefore`, or null. */
  get(key: string, notBefore: number): Promise<CachedPage | null>;
  /** Queues entries for writing (written in batches; may be lost on a crash, never half-written). */
  put(pages: CachedPage[]): void;
  /** Forgets entries stored before `cutoff`. */
  deleteBefore(cutoff: number): Promise<void>;
  /** Writes what is queued. */
  close(): Promise<void>;
}

/** Same URL (fragment ignored) and same request headers: same cached response. */
export function pageCacheKey(url: string, headers?: Record<string, string>): string {
  const u = new URL(url);
  u.hash = "";
  const h = headers ? Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]).sort(([a], [b]) => (a as string).localeCompare(b as string)) : [];
  return createHash("sha256").update(JSON.stringify([u.href, h])).digest("hex");
}

/** A 64-hex-digit key (`pageCacheKey`) as the 16 bytes of its first half, one latin1 character each. */
const HEX_KEY = /^[0-9a-f]{64}$/;
const indexKey = (key: string): string => (HEX_KEY.test(key) ? Buffer.from(key.slice(0, 32), "hex").toString("latin1") : key);

/**
 * Where each entry of the cache file is: one row per key, its position, length and time in three typed columns.
 * A Map of objects keyed by the 64-character hex key took ~180 bytes of heap per cached page (the largest of the
 * embedded mode's per-URL indexes, bench/README.md); this takes ~70 bytes of heap and 20 outside it. Keys are
 * held as a 128-bit prefix of their digest: `get` compares the whole key it reads back, so two keys sharing a
 * prefix could only make a miss, never a wrong page.
 */
class RefIndex {
  private readonly rows = new Map<string, number>();
  private pos = new Float64Array(256);
  private len = new Uint32Array(256);
  private at = new Float64Array(256);
  private used = 0;
  private readonly free: number[] = [];

  get(key: string): { pos: number; len: number; storedAt: number } | null {
    const row = this.rows.get(indexKey(key));
    return row === undefined ? null : { pos: this.pos[row] as number, len: this.len[row] as number, storedAt: this.at[row] as number };
  }

  set(key: string, pos: number, len: number, storedAt: number): void {
    const k = indexKey(key);
    let row = this.rows.get(k);
    if (row === undefined) {
      row = this.free.pop() ?? this.grow();
      this.rows.set(k, row);
    }
    this.pos[row] = pos;
    this.len[row] = len;
    this.at[row] = storedAt;
  }

  private grow(): number {
    if (this.used === this.pos.length) {
      const n = this.used * 2;
      const pos = new Float64Array(n);
      const len = new Uint32Array(n);
      const at = new Float64Array(n);
      pos.set(this.pos);
      len.set(this.len);
      at.set(this.at);
      [this.pos, this.len, this.at] = [pos, len, at];
    }
    return this.used++;
  }

  deleteBefore(cutoff: number): void {
    for (const [k, row] of this.rows) {
      if ((this.at[row] as number) >= cutoff) continue;
      this.rows.delete(k);
      this.free.push(row);
    }
  }
}

/** The key and time of a cache entry's JSON, or null when the record is not a cache entry. */
function entryHead(json: string): { key: string; storedAt: number } | null {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return null; // reported by the caller, with the entry's position
  }
  const { key, storedAt } = (entry ?? {}) as Partial<CachedPage>;
  return typeof key === "string" && typeof storedAt === "number" ? { key, storedAt } : null;
}

/** Embedded mode: cache.jsonl under the data directory (memory only when `dir` is null); the index stays in memory. */
export class EmbeddedPageCache implements PageCache {
  private readonly log: AppendLog | null;
  private reader: FileReader | null = null;
  private readonly index = new RefIndex();
  private readonly memory = new Map<string, CachedPage>();
  private readonly logger: Logger | undefined;

  private constructor(dir: string | null, logger: Logger | undefined) {
    this.log = dir ? new AppendLog(join(dir, "store", "cache.jsonl")) : null;
    this.logger = logger;
  }

  /** Bytes of a torn last entry dropped when the file was opened (a crash in the middle of a write). */
  get repairedBytes(): number {
    return this.log?.repairedBytes ?? 0;
  }

  /**
   * Opens the cache, dropping entries stored before `cutoff` (the file is rewritten when any were dropped). An entry
   * that cannot be read (damaged, or not a cache entry) is dropped with a warning, never fails the start: the cache
   * is a cache, and those pages are fetched again.
   */
  static async open(dir: string | null, cutoff: number, logger?: Logger): Promise<EmbeddedPageCache> {
    const cache = new EmbeddedPageCache(dir, logger);
    const log = cache.log;
    if (!log) return cache;
    const kept: { key: string; storedAt: number; pos: number; len: number }[] = [];
    const bad: number[] = [];
    let expired = 0;
    for await (const { line, pos, len } of readLines(log.path, (at) => bad.push(at))) {
      const head = entryHead(line);
      if (!head) bad.push(pos);
      else if (head.storedAt >= cutoff) kept.push({ ...head, pos, len });
      else expired++;
    }
    if (bad.length > 0) {
      bad.sort((x, y) => x - y);
      logger?.warn({ file: log.path, dropped: bad.length, positions: bad.slice(0, 20) }, "page cache: unreadable entries dropped (those pages will be fetched again)");
    }
    let size = log.size;
    if (expired + bad.length > 0) {
      // the kept entries' lines, read again and streamed to the new file (holding them all could exceed memory)
      await log.rewriteFrom((async function* () {
        let next = 0;
        for await (const { line, pos } of readLines(log.path)) {
          if (kept[next]?.pos !== pos) continue;
          yield line;
          next++;
        }
      })());
      size = 0;
      for (const k of kept) {
        k.pos = size;
        size += k.len + FRAME_BYTES + 1;
      }
    }
    for (const { key, storedAt, pos, len } of kept) {
      const prev = cache.index.get(key);
      if (!prev || storedAt >= prev.storedAt) cache.index.set(key, pos, len, storedAt);
    }
    log.size = size;
    return cache;
  }

  async get(key: string, notBefore: number): Promise<CachedPage | null> {
    if (!this.log) {
      const page = this.memory.get(key);
      return page && page.storedAt >= notBefore ? page : null;
    }
    const ref = this.index.get(key);
    if (!ref || ref.storedAt < notBefore) return null;
    await this.log.flush();
    this.reader ??= new FileReader(this.log.path);
    const text = (await this.reader.read(ref.pos, ref.len)).toString("utf8");
    let page: CachedPage;
    try {
      page = JSON.parse(text) as CachedPage;
    } catch (err) {
      this.logger?.warn({ file: this.log.path, pos: ref.pos, bytes: ref.len, err: (err as Error).message }, "page cache: unreadable entry ignored (the page is fetched again)");
      return null;
    }
    return page.key === key ? page : null;
  }

  put(pages: CachedPage[]): void {
    if (pages.length === 0) return;
    if (!this.log) {
      for (const p of pages) this.memory.set(p.key, p);
      return;
    }
    const lines = pages.map((p) => JSON.stringify(p));
    const { positions, written } = this.log.append(lines);
    // indexed once on disk: a reader never sees an entry that is not there yet
    void written.then(
      () => pages.forEach((p, i) => this.index.set(p.key, positions[i] as number, Buffer.byteLength(lines[i] as string), p.storedAt)),
      () => undefined,
    );
  }

  async deleteBefore(cutoff: number): Promise<void> {
    this.index.deleteBefore(cutoff);
    for (const [key, page] of this.memory) if (page.storedAt < cutoff) this.memory.delete(key);
  }

  async close(): Promise<void> {
    await this.log?.close();
    await this.reader?.reset();
  }
}
