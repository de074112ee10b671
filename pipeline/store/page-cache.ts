// The page cache behind `maxAge` / `storeInCache`: fetched responses (not documents) keyed by URL and request
// headers, so a hit is converted with the caller's own formats and options and still yields the page's links.
// Writes are best effort (a cache that cannot be written never fails a page); reads are bounded by maxAge.
// Adapters: EmbeddedPageCache (a JSON-lines file, or memory) and ClickHousePageCache (clickhouse-page-cache.ts).
import { createHash } from "node:crypto";
import { join } from "node:path";
import { AppendLog, FileReader, FRAME_BYTES, readLines } from "../runtime/append-log.ts";
import { CACHE_ROW_BYTES, CacheIndex, type CacheRef } from "./page-cache-index.ts";
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

/**
 * Embedded mode: cache.jsonl under the data directory, its index in cache.idx (page-cache-index.ts; memory only when
 * `dir` is null). A start reads neither: only entries written after the last indexed one (a crash between an entry and
 * its row, or a file of an earlier release without an index) are read and indexed. Expired entries are not served,
 * and the sweep rewrites the file without them once they are half of it.
 */
export class EmbeddedPageCache implements PageCache {
  private readonly log: AppendLog | null;
  private reader: FileReader | null = null;
  private index: CacheIndex | null = null;
  private readonly memory = new Map<string, CachedPage>();
  private readonly logger: Logger | undefined;
  /** entries stored before are not served (and go at the next compaction) */
  private cutoff: number;
  /** a compaction is rewriting the file: puts are dropped meanwhile (the cache is best effort) */
  private compacting = false;

  private constructor(dir: string | null, cutoff: number, logger: Logger | undefined) {
    this.log = dir ? new AppendLog(join(dir, "store", "cache.jsonl")) : null;
    this.index = dir ? new CacheIndex(join(dir, "store", "cache.idx")) : null;
    this.cutoff = cutoff;
    this.logger = logger;
  }

  /** Bytes of a torn last entry dropped when the file was opened (a crash in the middle of a write). */
  get repairedBytes(): number {
    return this.log?.repairedBytes ?? 0;
  }

  /**
   * Opens the cache; entries stored before `cutoff` are not served. An entry that cannot be read (damaged, or not a
   * cache entry) among those indexed at open is dropped with a warning, never fails the start: the cache is a cache,
   * and those pages are fetched again.
   */
  static async open(dir: string | null, cutoff: number, logger?: Logger): Promise<EmbeddedPageCache> {
    const cache = new EmbeddedPageCache(dir, cutoff, logger);
    const { log, index } = cache;
    if (!log || !index) return cache;
    const from = index.covered();
    if (from >= log.size) return cache;
    const bad: number[] = [];
    let found: (CacheRef & { key: string })[] = [];
    for await (const { line, pos, len } of readLines(log.path, (at) => bad.push(at), undefined, from)) {
      const head = entryHead(line);
      if (!head) bad.push(pos);
      else found.push({ ...head, pos, len });
      if (found.length >= 4096) {
        index.append(found);
        found = [];
      }
    }
    index.append(found);
    if (bad.length > 0) {
      bad.sort((x, y) => x - y);
      logger?.warn({ file: log.path, dropped: bad.length, positions: bad.slice(0, 20) }, "page cache: unreadable entries dropped (those pages will be fetched again)");
    }
    // unreadable records, or unframed ones of an earlier format (the index counts framed lines): rewritten
    if (bad.length > 0 || index.covered() !== log.size) await cache.compact();
    return cache;
  }

  async get(key: string, notBefore: number): Promise<CachedPage | null> {
    if (!this.log || !this.index) {
      const page = this.memory.get(key);
      return page && page.storedAt >= notBefore ? page : null;
    }
    const ref = this.index.get(key);
    if (!ref || ref.storedAt < Math.max(notBefore, this.cutoff)) return null;
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
    if (!this.log || !this.index) {
      for (const p of pages) this.memory.set(p.key, p);
      return;
    }
    if (this.compacting) return;
    const index = this.index;
    const lines = pages.map((p) => JSON.stringify(p));
    const { positions, written } = this.log.append(lines);
    // indexed once on disk: a reader never sees an entry that is not there yet
    void written.then(
      () => index.append(pages.map((p, i) => ({ key: p.key, pos: positions[i] as number, len: Buffer.byteLength(lines[i] as string), storedAt: p.storedAt }))),
      () => undefined,
    );
  }

  async deleteBefore(cutoff: number): Promise<void> {
    this.cutoff = Math.max(this.cutoff, cutoff);
    for (const [key, page] of this.memory) if (page.storedAt < cutoff) this.memory.delete(key);
    const index = this.index;
    if (!index || this.compacting || index.size === 0) return;
    if (index.firstAtOrAfter(this.cutoff) * 2 >= index.size) await this.compact();
  }

  /** Rewrites the file (streamed) with the newest entry of each key not expired, and its index. */
  private async compact(): Promise<void> {
    const log = this.log as AppendLog;
    const index = this.index as CacheIndex;
    this.compacting = true;
    try {
      await log.flush();
      const kept: number[] = [];
      index.scan((row, i) => {
        if (row.readDoubleLE(24) >= this.cutoff && index.get(Buffer.from(row.subarray(0, 16)))?.row === i) kept.push(i);
      });
      const file = new FileReader(log.path);
      await log.rewriteFrom((async function* () {
        for (const i of kept) {
          const r = index.row(i);
          yield (await file.read(r.pos, r.len)).toString("utf8");
        }
      })());
      await file.reset();
      const rows = Buffer.alloc(kept.length * CACHE_ROW_BYTES);
      let pos = 0;
      kept.forEach((i, k) => {
        const at = k * CACHE_ROW_BYTES;
        index.rawRow(i).copy(rows, at);
        rows.writeDoubleLE(pos, at + 16);
        pos += rows.readUInt32LE(at + 32) + FRAME_BYTES + 1;
      });
      index.replace(rows);
      await this.reader?.reset();
    } finally {
      this.compacting = false;
    }
  }

  async close(): Promise<void> {
    await this.log?.close();
    await this.reader?.reset();
  }
}
