// Embedded adapter of the CrawlStore port: no server, JSON-lines files under the data directory.
// journal.jsonl holds crawl versions, cancels and errors; urls/ each crawl's URL states (url-logs.ts); documents/*.jsonl (segments, doc-segments.ts) hold
// documents, which stay on disk, and index/ their index (doc-index.ts: a row per document, read by position; memory holds
// a crawl's key fingerprints only while it is written to). The journal is replayed at start; the documents are not:
// index/mark says up to where every document is indexed, and only those written after it (a crash's last moments) are
// read and indexed again. A restart keeps every crawl until it expires. The sweep deletes the segments that hold only
// expired crawls' documents; the journal is compacted at a start.
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crawlUsage, expiredCrawl, type CrawlRecord, type CrawlStore, type DeliveryRow, type DocumentKeys, type DocumentPage, type DocumentRow, type ErrorRow, type ExpiredCrawl, type JobUsage, type SearchCandidates, type UrlRow } from "./crawl-store.ts";
import { AppendLog, readLines } from "../runtime/append-log.ts";
import { mergeUrlRow } from "./crawl-store.ts";
import { journalCrawlId, sizeOf, type JournalEntry } from "./embedded-journal.ts";
import { DocSegments, type SegmentOptions } from "./doc-segments.ts";
import { fitChunk } from "./paging.ts";
import { DocIndex, FdPool, type DocRef, type DocRow } from "./doc-index.ts";
import { UrlLogs } from "./url-logs.ts";
import { DiskUrlListings } from "./url-listing.ts";
import type { CrawlUrlListings } from "./crawl-store.ts";
import { isScrapeJob, isStandaloneJob, isTeamScrape, RETENTION_MS } from "../runtime/constants.ts";

/** Rows of one segment at most this far apart are read together (the bytes between are read and dropped)… */
const READ_GAP_BYTES = 64 * 1024;
/** …in reads of at most this many bytes. */
const READ_RUN_BYTES = 16 * 1024 * 1024;
/** Index rows read for one page at most (a page is cut to its byte budget after). */
const MAX_PAGE_ROWS = 10_000;

const newer = (a: CrawlRecord, b: CrawlRecord | undefined) => !b || a.version > b.version || (a.version === b.version && a.updatedAt >= b.updatedAt);

export class EmbeddedCrawlStore implements CrawlStore {
  private readonly journal: AppendLog | null;
  private readonly docsLog: DocSegments | null;
  /** the newest `now` the store was told (at open and by each sweep): when a full segment rolls */
  private now: number;
  private readonly crawls = new Map<string, CrawlRecord>();
  private readonly cancels = new Map<string, number>();
  private readonly docs = new Map<string, DocIndex>();
  private readonly errors = new Map<string, Map<string, ErrorRow>>();
  private readonly deliveries = new Map<string, DeliveryRow[]>();
  /** idempotency keys (team + key) -> when claimed */
  private readonly idem = new Map<string, number>();
  private readonly fds = new FdPool();
  private readonly urlLogs: UrlLogs | null;
  private readonly listings: DiskUrlListings | null;
  readonly urlListings: CrawlUrlListings | undefined;
  /** where index/ is (null: memory only) */
  private readonly indexDir: string | null;
  private markFd: number | null = null;
  /** the segment place of each insert whose documents are being written, oldest first (the mark stays before them) */
  private readonly unindexed: { seg: number; pos: number }[] = [];
  /** memory-only mode keeps URL rows and documents here */
  private readonly memUrls = new Map<string, UrlRow[]>();
  private readonly memDocs = new Map<string, string[]>();

  /** Records in the middle of the files whose checksum failed when they were read (skipped). */
  damagedRecords = 0;
  private readonly countDamaged = (): void => {
    this.damagedRecords++;
  };

  private constructor(dir: string | null, now: number, opts: SegmentOptions) {
    this.now = now;
    this.journal = dir ? new AppendLog(join(dir, "store", "journal.jsonl")) : null;
    this.docsLog = dir ? new DocSegments(join(dir, "store"), now, opts) : null;
    this.indexDir = dir ? join(dir, "store", "index") : null;
    this.urlLogs = dir ? new UrlLogs(join(dir, "store")) : null;
    this.listings = dir ? new DiskUrlListings(join(dir, "store", "urls")) : null;
    const listings = this.listings;
    // a listing is for the crawl's record and URL rows as they were when it was built
    const stamp = (c: CrawlRecord) => `${c.status}:${c.version}:${c.updatedAt}:${this.urlLogs?.sizeOf(c.crawlId) ?? 0}`;
    this.urlListings = listings ? { open: (c) => listings.open(c.crawlId, stamp(c)), save: (c, items, unlisted) => listings.save(c.crawlId, stamp(c), items, unlisted) } : undefined;
  }

  /** Opens the store in `dir` (null: memory only), dropping crawls expired before `now`. */
  static async open(dir: string | null, now: number, opts: SegmentOptions = {}): Promise<EmbeddedCrawlStore> {
    const store = new EmbeddedCrawlStore(dir, now, opts);
    await store.load(now);
    return store;
  }

  private async load(now: number): Promise<void> {
    if (!this.journal || !this.docsLog || !this.urlLogs) return;
    /** URL rows of a journal written by an earlier release, moved to urls/ */
    let moved: UrlRow[] = [];
    let hadUrls = false;
    for await (const { line } of readLines(this.journal.path, this.countDamaged)) {
      if (line.startsWith('{"t":"urls"')) {
        hadUrls = true;
        try {
          moved.push(...(JSON.parse(line) as { rows: UrlRow[] }).rows);
        } catch {
          continue;
        }
        if (moved.length >= 10_000) {
          await this.urlLogs.append(moved);
          moved = [];
        }
        continue;
      }
      let e: JournalEntry;
      try {
        e = JSON.parse(line);
      } catch {
        continue; // torn last line
      }
      if (e.t === "crawl") this.applyCrawl(e.r);
      else if (e.t === "cancel") this.cancels.set(e.id, e.at);
      else if (e.t === "errors") this.applyErrors(e.rows);
      else if (e.t === "deliveries") this.applyDeliveries(e.rows);
      else if (e.t === "idem" && e.at >= now - RETENTION_MS) this.idem.set(JSON.stringify([e.team, e.key]), e.at);
    }
    this.openIndexes();
    await this.indexDocuments();
    const expired = new Set([...this.crawls.values()].filter((c) => c.status !== "scraping" && c.expiresAt < now).map((c) => c.crawlId));
    await this.urlLogs.append(moved);
    for (const id of expired) this.forget(id);
    for (const id of this.urlLogs.crawlIds()) {
      if (this.crawls.has(id)) continue;
      await this.urlLogs.remove(id);
      this.listings?.remove(id);
    }
    if (expired.size > 0 || hadUrls) {
      // retention: rewrite the journal without the expired crawls (the segments holding only theirs are deleted below),
      // and without URL rows (moved to urls/ above: a crash before this rewrite moves them again, read the same way)
      await this.compact(this.journal, (line) => {
        if (line.startsWith('{"t":"urls"')) return false;
        try {
          return !expired.has(journalCrawlId(JSON.parse(line) as JournalEntry));
        } catch {
          return false;
        }
      });
    }
    await this.docsLog.reclaim(now, (id) => this.docs.has(id));
    this.journal.size = await sizeOf(this.journal.path);
  }

  /** Rewrites a log with the records `keep` accepts, streamed (a store may be larger than memory would hold). */
  private async compact(log: AppendLog, keep: (line: string) => boolean): Promise<void> {
    await log.rewriteFrom((async function* () {
      for await (const { line } of readLines(log.path)) if (keep(line)) yield line;
    })());
  }

  private indexPaths(id: string): { idx: string; keys: string } {
    const base = join(this.indexDir as string, Buffer.from(id, "utf8").toString("base64url"));
    return { idx: `${base}.idx`, keys: `${base}.keys` };
  }

  /** The indexes on disk of the crawls the journal knows (and single scrapes'), without reading them. */
  private openIndexes(): void {
    if (!this.indexDir) return;
    mkdirSync(this.indexDir, { recursive: true });
    for (const f of readdirSync(this.indexDir)) {
      if (!f.endsWith(".idx")) continue;
      const id = Buffer.from(f.slice(0, -".idx".length), "base64url").toString("utf8");
      const index = new DocIndex(this.indexPaths(id), this.fds);
      if (isStandaloneJob(id) || this.crawls.has(id)) this.docs.set(id, index);
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
  private async indexDocuments(): Promise<void> {
    if (!this.docsLog) return;
    const mark = this.readMark() ?? { seg: 0, pos: 0 };
    const unlisted = this.docsLog.firstUnlisted();
    const from = unlisted !== null && unlisted <= mark.seg ? { seg: unlisted, pos: 0 } : mark;
    const pending = new Map<string, DocRef[]>();
    const lastOf = new Map<string, { seg: number; pos: number }>();
    const flush = (id: string) => {
      const refs = pending.get(id);
      if (refs?.length) this.indexOf(id).add(refs);
      pending.delete(id);
    };
    for await (const { line, pos, len, bytes, seg } of this.docsLog.records(this.countDamaged, from)) {
      let head: { c: string; s: number; k: string; f?: string; t?: number; sc?: number };
      try {
        head = JSON.parse(line.slice(0, line.indexOf(',"d":')) + "}");
        JSON.parse(line);
      } catch {
        continue;
      }
      if (!isStandaloneJob(head.c) && !this.crawls.has(head.c)) continue; // a crawl that expired
      this.docsLog.note(seg, head.c);
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
    for (const seg of this.docsLog.ids()) if (seg >= from.seg) this.docsLog.listed(seg);
    for (const index of this.docs.values()) index.release(); // fingerprints are loaded again by the crawls written to
    this.writeMark(this.docsLog.end());
  }

  private applyCrawl(r: CrawlRecord): void {
    r.tokensUsed ??= 0; // a record written before tokens were counted
    if (newer(r, this.crawls.get(r.crawlId))) this.crawls.set(r.crawlId, r);
  }

  private applyErrors(rows: ErrorRow[]): void {
    for (const r of rows) {
      const m = this.errors.get(r.crawlId) ?? new Map<string, ErrorRow>();
      const prev = m.get(r.urlKey);
      if (!prev || r.at >= prev.at) m.set(r.urlKey, r);
      this.errors.set(r.crawlId, m);
    }
  }

  private applyDeliveries(rows: DeliveryRow[]): void {
    for (const r of rows) {
      const list = this.deliveries.get(r.crawlId) ?? [];
      list.push(r);
      this.deliveries.set(r.crawlId, list);
    }
  }

  /** Documents of a team: of its crawls and batches, and its single scrapes. */
  private ownedBy(teamId: string, crawlId: string): boolean {
    return isScrapeJob(crawlId) ? isTeamScrape(teamId, crawlId) : this.crawls.get(crawlId)?.teamId === teamId;
  }

  private indexOf(crawlId: string): DocIndex {
    let index = this.docs.get(crawlId);
    if (!index) {
      index = new DocIndex(this.indexDir ? this.indexPaths(crawlId) : null, this.fds);
      this.docs.set(crawlId, index);
    }
    return index;
  }

  private async write(entry: JournalEntry): Promise<void> {
    if (this.journal) await this.journal.append([JSON.stringify(entry)]).written;
  }

  async getCrawl(crawlId: string): Promise<CrawlRecord | null> {
    const c = this.crawls.get(crawlId);
    if (!c) return null;
    return { ...c, status: c.status === "scraping" && this.cancels.has(crawlId) ? "cancelled" : c.status };
  }

  async saveCrawls(records: CrawlRecord[]): Promise<void> {
    for (const r of records) await this.write({ t: "crawl", r });
    for (const r of records) this.applyCrawl(r);
  }

  async cancelCrawl(crawlId: string, at: number): Promise<void> {
    await this.write({ t: "cancel", id: crawlId, at });
    this.cancels.set(crawlId, at);
  }

  async cancelled(crawlIds: string[]): Promise<Set<string>> {
    return new Set(crawlIds.filter((id) => this.cancels.has(id)));
  }

  async saveUrls(rows: UrlRow[]): Promise<void> {
    if (this.urlLogs) {
      await this.urlLogs.append(rows);
      return;
    }
    for (const r of rows) {
      const list = this.memUrls.get(r.crawlId) ?? [];
      list.push(r);
      this.memUrls.set(r.crawlId, list);
    }
  }

  /** Reads the crawl's own URL log (urls/) rather than holding every URL in memory. */
  async loadUrls(crawlId: string): Promise<UrlRow[]> {
    const latest = new Map<string, UrlRow>();
    const take = (r: UrlRow) => {
      if (r.crawlId === crawlId) latest.set(r.urlKey, mergeUrlRow(latest.get(r.urlKey), r));
    };
    if (!this.urlLogs) {
      for (const r of this.memUrls.get(crawlId) ?? []) take(r);
      return [...latest.values()];
    }
    for await (const rows of this.urlLogs.batches(crawlId)) for (const r of rows) take(r);
    return [...latest.values()];
  }

  async insertDocuments(rows: DocumentRow[]): Promise<void> {
    if (rows.length === 0) return;
    if (!this.docsLog) {
      for (const r of rows) {
        const list = this.memDocs.get(r.crawlId) ?? [];
        if (this.indexOf(r.crawlId).add([{ seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, seg: 0, pos: list.length, len: 0, docStart: 0, storedAt: r.storedAt, statusCode: r.statusCode }]) > 0) list.push(r.doc);
        this.memDocs.set(r.crawlId, list);
      }
      return;
    }
    const lines = rows.map((r) => `${JSON.stringify({ c: r.crawlId, s: r.seq, k: r.urlKey, f: r.finalKey, t: r.storedAt, sc: r.statusCode }).slice(0, -1)},"d":${r.doc}}`);
    const { seg, positions, written } = this.docsLog.append(lines, new Set(rows.map((r) => r.crawlId)), this.now);
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
    } finally {
      this.unindexed.splice(this.unindexed.indexOf(place), 1);
      // every document before the oldest insert still being written is indexed (all of them when none is)
      this.writeMark(this.unindexed[0] ?? this.docsLog.end());
    }
  }

  async documentKeys(crawlId: string): Promise<DocumentKeys> {
    const index = this.docs.get(crawlId);
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
  private async readDocs(crawlId: string, rows: DocRow[]): Promise<string[]> {
    if (!this.docsLog) {
      const list = this.memDocs.get(crawlId) ?? [];
      return rows.map((r) => list[r.pos] as string);
    }
    const log = this.docsLog;
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

  async pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    const index = this.docs.get(crawlId);
    if (!index) return { docs: [], nextSkip: skip, more: false };
    const first = index.firstAtLeast(skip);
    const rows = index.range(first, Math.min(maxDocs, MAX_PAGE_ROWS) + 1);
    // a document's JSON is [docStart, len - 1) of its line (the closing brace is the line's): its size is known here
    const sizes = rows.map((r) => (this.docsLog ? r.len - r.docStart - 1 : -1));
    const take = this.docsLog ? fitChunk(sizes.slice(0, maxDocs), maxBytes, maxDocs) : await this.fitMemory(crawlId, rows, maxBytes, maxDocs);
    if (take === 0) return { docs: [], nextSkip: skip, more: false };
    const docs = await this.readDocs(crawlId, rows.slice(0, take));
    return { docs, nextSkip: (rows[take - 1] as DocRow).seq + 1, more: rows.length > take };
  }

  private async fitMemory(crawlId: string, rows: DocRow[], maxBytes: number, maxDocs: number): Promise<number> {
    const texts = await this.readDocs(crawlId, rows.slice(0, maxDocs));
    return fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs);
  }

  async scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined> {
    const index = this.docs.get(jobId);
    // a row written before documents carried their time reads as fresh (the sweep keeps it too)
    if (!index || index.size === 0 || index.storedAtOf(0, storedSince) < storedSince) return undefined;
    return (await this.readDocs(jobId, [index.row(0)]))[0];
  }

  async activeCrawls(teamId: string): Promise<CrawlRecord[]> {
    return [...this.crawls.values()]
      .filter((c) => c.teamId === teamId && c.status === "scraping" && !this.cancels.has(c.crawlId))
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  async insertErrors(rows: ErrorRow[]): Promise<void> {
    await this.write({ t: "errors", rows });
    this.applyErrors(rows);
  }

  async listErrors(crawlId: string): Promise<ErrorRow[]> {
    return [...(this.errors.get(crawlId)?.values() ?? [])].sort((a, b) => a.at - b.at);
  }

  /**
   * Forgets expired crawls at once and deletes the document segments left without a live crawl's document (the
   * journal's lines of expired crawls leave it at the next start, see `load`).
   */
  async deleteExpired(now: number, retentionMs: number, beforeDelete?: (crawls: ExpiredCrawl[]) => Promise<void>): Promise<string[]> {
    const expired = [...this.crawls.values()].filter((c) => c.status !== "scraping" && c.expiresAt < now);
    if (beforeDelete && expired.length) await beforeDelete(expired.map(expiredCrawl));
    const ids = expired.map((c) => c.crawlId);
    for (const id of ids) this.forget(id);
    for (const id of ids) await this.urlLogs?.remove(id);
    for (const id of ids) this.listings?.remove(id);
    for (const id of this.urlLogs?.openCrawls() ?? []) if (this.crawls.get(id)?.status !== "scraping") await this.urlLogs?.release(id);
    for (const [k, at] of this.idem) if (at < now - retentionMs) this.idem.delete(k);
    for (const [id, index] of this.docs) {
      if (isStandaloneJob(id) && this.crawls.get(id) === undefined && index.storedAtOf(0, now) < now - retentionMs) this.forget(id);
      // a crawl no longer written to gives back its key fingerprints (loaded again if a late page comes)
      else if (this.crawls.get(id)?.status !== "scraping") index.release();
    }
    this.now = Math.max(this.now, now);
    await this.docsLog?.reclaim(now, (id) => this.docs.has(id));
    return ids;
  }

  async runningCrawlIds(): Promise<string[]> {
    return [...this.crawls.values()].filter((c) => c.status === "scraping" && !this.cancels.has(c.crawlId)).map((c) => c.crawlId);
  }

  /** Bytes of torn last records dropped when the files were opened (a crash in the middle of a write). */
  get repairedBytes(): number {
    return (this.journal?.repairedBytes ?? 0) + (this.docsLog?.repairedBytes ?? 0);
  }

  async usageByCrawl(teamId: string): Promise<Map<string, JobUsage>> {
    return new Map([...this.crawls.values()].filter((c) => c.teamId === teamId).map((c) => [c.crawlId, crawlUsage(c)]));
  }

  private forget(id: string): void {
    this.crawls.delete(id);
    this.docs.get(id)?.remove();
    this.docs.delete(id);
    this.errors.delete(id);
    this.deliveries.delete(id);
    this.memDocs.delete(id);
    this.memUrls.delete(id);
  }

  async claimIdempotencyKey(teamId: string, key: string, at: number): Promise<boolean> {
    const k = JSON.stringify([teamId, key]);
    // a claim older than the retention no longer counts, swept or not (as in ClickHouse)
    if ((this.idem.get(k) ?? -Infinity) >= at - RETENTION_MS) return false;
    this.idem.set(k, at); // before the write: a second claim during it already sees the key
    await this.write({ t: "idem", team: teamId, key, at });
    return true;
  }

  async logDeliveries(rows: DeliveryRow[]): Promise<void> {
    await this.write({ t: "deliveries", rows });
    this.applyDeliveries(rows);
  }

  async listDeliveries(crawlId: string): Promise<DeliveryRow[]> {
    return [...(this.deliveries.get(crawlId) ?? [])].sort((a, b) => a.at - b.at || a.attempt - b.attempt);
  }

  async mostRecentSuccess(teamId: string, since: number): Promise<number | null> {
    let last: number | null = null;
    for (const [crawlId, index] of this.docs) {
      if (!this.ownedBy(teamId, crawlId)) continue;
      const at = index.newestSuccess(); // read from disk once per crawl, then kept
      if (at !== null && at >= since && (last === null || at > last)) last = at;
    }
    return last;
  }

  /** Reads every document stored since `since` (the embedded mode's corpus is one machine's crawls). */
  async searchCandidates(teamId: string, terms: string[], since: number, maxDocs: number): Promise<SearchCandidates> {
    const df = terms.map(() => 0);
    const hits: { doc: string; matched: number; at: number }[] = [];
    let corpus = 0;
    for (const [crawlId, index] of this.docs) {
      if (!this.ownedBy(teamId, crawlId)) continue;
      for (let from = 0; from < index.size; from += 256) {
        const rows = index.range(from, 256).filter((r) => (Number.isNaN(r.storedAt) ? 0 : r.storedAt) >= since);
        const docs = await this.readDocs(crawlId, rows);
        docs.forEach((doc, k) => {
          corpus++;
          const lower = doc.toLowerCase();
          let matched = 0;
          terms.forEach((t, i) => {
            if (!lower.includes(t)) return;
            df[i] = (df[i] as number) + 1;
            matched++;
          });
          const at = (rows[k] as DocRow).storedAt;
          if (matched > 0) hits.push({ doc, matched, at: Number.isNaN(at) ? 0 : at });
        });
      }
    }
    hits.sort((a, b) => b.matched - a.matched || b.at - a.at);
    return { corpus, df, docs: hits.slice(0, maxDocs).map((h) => h.doc) };
  }

  async close(): Promise<void> {
    await this.urlLogs?.close();
    await this.journal?.close();
    await this.docsLog?.close();
    if (this.docsLog && this.unindexed.length === 0) this.writeMark(this.docsLog.end());
    if (this.markFd !== null) closeSync(this.markFd);
    this.markFd = null;
    this.fds.closeAll();
  }
}
