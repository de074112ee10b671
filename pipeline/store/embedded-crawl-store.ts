// Embedded adapter of the CrawlStore port: no server, JSON-lines files under the data directory.
// journal.jsonl holds crawl versions, cancels, URL states and errors; documents/*.jsonl (segments, doc-segments.ts) hold
// documents, which stay on disk (memory keeps only an index). Both are replayed at start, so a restart keeps every crawl
// until it expires. The sweep deletes the segments that hold only expired crawls' documents; the journal is compacted
// at a start.
import { join } from "node:path";
import { crawlUsage, expiredCrawl, type CrawlRecord, type CrawlStore, type DeliveryRow, type DocumentKeys, type DocumentPage, type DocumentRow, type ErrorRow, type ExpiredCrawl, type JobUsage, type SearchCandidates, type UrlRow } from "./crawl-store.ts";
import { AppendLog, readLines } from "../runtime/append-log.ts";
import { mergeUrlRow } from "./crawl-store.ts";
import { journalCrawlId, sizeOf, type JournalEntry } from "./embedded-journal.ts";
import { DocSegments, type SegmentOptions } from "./doc-segments.ts";
import { fitChunk } from "./paging.ts";
import { DocIndex, type DocRef } from "./doc-index.ts";
import { isScrapeJob, isStandaloneJob, isTeamScrape, RETENTION_MS } from "../runtime/constants.ts";

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
  /** per crawl (or scrape) id: when its newest document with a status below 400 was stored */
  private readonly lastSuccess = new Map<string, number>();
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
  }

  /** Opens the store in `dir` (null: memory only), dropping crawls expired before `now`. */
  static async open(dir: string | null, now: number, opts: SegmentOptions = {}): Promise<EmbeddedCrawlStore> {
    const store = new EmbeddedCrawlStore(dir, now, opts);
    await store.load(now);
    return store;
  }

  private async load(now: number): Promise<void> {
    if (!this.journal || !this.docsLog) return;
    for await (const { line } of readLines(this.journal.path, this.countDamaged)) {
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
    await this.indexDocuments();
    const expired = new Set([...this.crawls.values()].filter((c) => c.status !== "scraping" && c.expiresAt < now).map((c) => c.crawlId));
    for (const id of expired) this.forget(id);
    if (expired.size > 0) {
      // retention: rewrite the journal without the expired crawls (the segments holding only theirs are deleted below)
      await this.compact(this.journal, (line) => {
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

  private async indexDocuments(): Promise<void> {
    if (!this.docsLog) return;
    for await (const { line, pos, len, bytes, seg } of this.docsLog.records(this.countDamaged)) {
      let head: { c: string; s: number; k: string; f?: string; t?: number; sc?: number };
      try {
        head = JSON.parse(line.slice(0, line.indexOf(',"d":')) + "}");
        JSON.parse(line);
      } catch {
        continue;
      }
      if (!isStandaloneJob(head.c) && !this.crawls.has(head.c)) continue; // a crawl that expired
      const docStart = bytes.indexOf(',"d":') + 5; // counted in the file's bytes (the marker is ASCII: its first match is the string's)
      this.addDocRef(head.c, { seq: head.s, urlKey: head.k, finalKey: head.f ?? head.k, seg, pos, len, docStart, storedAt: head.t });
      this.docsLog.note(seg, head.c);
      if ((head.sc ?? 200) < 400) this.noteSuccess(head.c, head.t);
    }
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

  private noteSuccess(crawlId: string, at: number | undefined): void {
    if (at !== undefined && at > (this.lastSuccess.get(crawlId) ?? -1)) this.lastSuccess.set(crawlId, at);
  }

  /** Documents of a team: of its crawls and batches, and its single scrapes. */
  private ownedBy(teamId: string, crawlId: string): boolean {
    return isScrapeJob(crawlId) ? isTeamScrape(teamId, crawlId) : this.crawls.get(crawlId)?.teamId === teamId;
  }

  private addDocRef(crawlId: string, ref: DocRef): void {
    let index = this.docs.get(crawlId);
    if (!index) {
      index = new DocIndex();
      this.docs.set(crawlId, index);
    }
    index.add(ref);
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
    if (this.journal) {
      await this.write({ t: "urls", rows });
      return;
    }
    for (const r of rows) {
      const list = this.memUrls.get(r.crawlId) ?? [];
      list.push(r);
      this.memUrls.set(r.crawlId, list);
    }
  }

  /** Only needed after a restart of the frontier: scans the journal rather than holding every URL in memory. */
  async loadUrls(crawlId: string): Promise<UrlRow[]> {
    const latest = new Map<string, UrlRow>();
    const take = (r: UrlRow) => {
      if (r.crawlId === crawlId) latest.set(r.urlKey, mergeUrlRow(latest.get(r.urlKey), r));
    };
    if (!this.journal) {
      for (const r of this.memUrls.get(crawlId) ?? []) take(r);
      return [...latest.values()];
    }
    await this.journal.flush();
    for await (const { line } of readLines(this.journal.path)) {
      if (!line.startsWith('{"t":"urls"') || !line.includes(crawlId)) continue;
      try {
        for (const r of (JSON.parse(line) as { rows: UrlRow[] }).rows) take(r);
      } catch {
        continue;
      }
    }
    return [...latest.values()];
  }

  async insertDocuments(rows: DocumentRow[]): Promise<void> {
    for (const r of rows) if (r.statusCode < 400) this.noteSuccess(r.crawlId, r.storedAt);
    if (!this.docsLog) {
      for (const r of rows) {
        const list = this.memDocs.get(r.crawlId) ?? [];
        this.addDocRef(r.crawlId, { seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, seg: 0, pos: list.length, len: 0, docStart: 0, storedAt: r.storedAt });
        list.push(r.doc);
        this.memDocs.set(r.crawlId, list);
      }
      return;
    }
    const lines = rows.map((r) => `${JSON.stringify({ c: r.crawlId, s: r.seq, k: r.urlKey, f: r.finalKey, t: r.storedAt, sc: r.statusCode }).slice(0, -1)},"d":${r.doc}}`);
    const { seg, positions, written } = this.docsLog.append(lines, new Set(rows.map((r) => r.crawlId)), this.now);
    await written;
    rows.forEach((r, i) => {
      const line = lines[i] as string;
      const docStart = Buffer.byteLength(line.slice(0, line.indexOf(',"d":') + 5));
      this.addDocRef(r.crawlId, { seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, seg, pos: positions[i] as number, len: Buffer.byteLength(line), docStart, storedAt: r.storedAt });
    });
  }

  async documentKeys(crawlId: string): Promise<DocumentKeys> {
    const index = this.docs.get(crawlId);
    if (!index) return { nextSeq: 0, keys: [], seqs: [], finalKeys: [] };
    // index.keys is in insertion order, as index.seq
    return { nextSeq: index.seq.reduce((m, seq) => Math.max(m, seq + 1), 0), keys: [...index.keys], seqs: [...index.seq], finalKeys: [...index.finalKey] };
  }

  /** The document of row `i` of a crawl's index. */
  private async readDoc(crawlId: string, index: DocIndex, i: number): Promise<string> {
    const pos = index.pos[i] as number;
    if (!this.docsLog) return (this.memDocs.get(crawlId) ?? [])[pos] as string;
    const bytes = await this.docsLog.read(index.seg[i] as number, pos, index.len[i] as number);
    return bytes.subarray(index.docStart[i] as number, bytes.length - 1).toString("utf8");
  }

  async pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    const index = this.docs.get(crawlId);
    if (!index) return { docs: [], nextSkip: skip, more: false };
    const first = index.firstAtLeast(skip);
    const candidates = Math.min(index.size - first, maxDocs + 1);
    const texts: string[] = [];
    for (let i = first; i < first + Math.min(candidates, maxDocs); i++) {
      texts.push(await this.readDoc(crawlId, index, i));
      if (fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs) < texts.length) break;
    }
    const take = fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs);
    if (take === 0) return { docs: [], nextSkip: skip, more: false };
    return { docs: texts.slice(0, take), nextSkip: (index.seq[first + take - 1] as number) + 1, more: candidates > take };
  }

  async scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined> {
    const index = this.docs.get(jobId);
    // a row written before documents carried their time reads as fresh (the sweep keeps it too)
    if (!index || index.size === 0 || index.storedAtOf(0, storedSince) < storedSince) return undefined;
    return this.readDoc(jobId, index, 0);
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
    for (const [k, at] of this.idem) if (at < now - retentionMs) this.idem.delete(k);
    for (const [id, index] of this.docs) {
      if (isStandaloneJob(id) && this.crawls.get(id) === undefined && index.storedAtOf(0, now) < now - retentionMs) this.forget(id);
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
    this.docs.delete(id);
    this.errors.delete(id);
    this.deliveries.delete(id);
    this.memDocs.delete(id);
    this.memUrls.delete(id);
    this.lastSuccess.delete(id);
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
    for (const [crawlId, at] of this.lastSuccess) if (at >= since && (last === null || at > last) && this.ownedBy(teamId, crawlId)) last = at;
    return last;
  }

  /** Reads every document stored since `since` (the embedded mode's corpus is one machine's crawls). */
  async searchCandidates(teamId: string, terms: string[], since: number, maxDocs: number): Promise<SearchCandidates> {
    const df = terms.map(() => 0);
    const hits: { doc: string; matched: number; at: number }[] = [];
    let corpus = 0;
    for (const [crawlId, index] of this.docs) {
      if (!this.ownedBy(teamId, crawlId)) continue;
      for (let i = 0; i < index.size; i++) {
        const at = index.storedAtOf(i);
        if (at < since) continue;
        corpus++;
        const doc = await this.readDoc(crawlId, index, i);
        const lower = doc.toLowerCase();
        let matched = 0;
        terms.forEach((t, i) => {
          if (!lower.includes(t)) return;
          df[i] = (df[i] as number) + 1;
          matched++;
        });
        if (matched > 0) hits.push({ doc, matched, at });
      }
    }
    hits.sort((a, b) => b.matched - a.matched || b.at - a.at);
    return { corpus, df, docs: hits.slice(0, maxDocs).map((h) => h.doc) };
  }

  async close(): Promise<void> {
    await this.journal?.close();
    await this.docsLog?.close();
  }
}
