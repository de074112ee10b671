// Embedded adapter of the CrawlStore port: no server, JSON-lines files under the data directory.
// journal.jsonl holds crawl versions, cancels and errors; urls/ each crawl's URL states (url-logs.ts); documents/ and
// index/ the documents and their index (embedded-documents.ts: they stay on disk, and a start reads only those written
// after the index's mark). The journal is replayed at start. A restart keeps every crawl until it expires. The sweep
// deletes the segments that hold only expired crawls' documents; the journal is compacted at a start.
import { join } from "node:path";
import { crawlUsage, expiredCrawl, type CrawlRecord, type CrawlStore, type DeliveryRow, type DocumentKeys, type DocumentPage, type DocumentRow, type ErrorRow, type ExpiredCrawl, type JobUsage, type SearchCandidates, type UrlRow } from "./crawl-store.ts";
import { AppendLog, readLines } from "../runtime/append-log.ts";
import { mergeUrlRow } from "./crawl-store.ts";
import { journalCrawlId, sizeOf, type JournalEntry } from "./embedded-journal.ts";
import type { SegmentOptions } from "./doc-segments.ts";
import type { DocRow } from "./doc-index.ts";
import { EmbeddedDocuments } from "./embedded-documents.ts";
import { UrlLogs } from "./url-logs.ts";
import { DiskUrlListings } from "./url-listing.ts";
import { EmbeddedUrlListings } from "./embedded-url-listings.ts";
import { isScrapeJob, isStandaloneJob, isTeamScrape, RETENTION_MS } from "../runtime/constants.ts";

const newer = (a: CrawlRecord, b: CrawlRecord | undefined) => !b || a.version > b.version || (a.version === b.version && a.updatedAt >= b.updatedAt);

export class EmbeddedCrawlStore implements CrawlStore {
  private readonly journal: AppendLog | null;
  private readonly documents: EmbeddedDocuments;
  private readonly crawls = new Map<string, CrawlRecord>();
  private readonly cancels = new Map<string, number>();
  private readonly errors = new Map<string, Map<string, ErrorRow>>();
  private readonly deliveries = new Map<string, DeliveryRow[]>();
  /** idempotency keys (team + key) -> when claimed */
  private readonly idem = new Map<string, number>();
  private readonly urlLogs: UrlLogs | null;
  private readonly listings: DiskUrlListings | null;
  readonly urlListings: EmbeddedUrlListings | undefined;
  /** memory-only mode keeps URL rows here */
  private readonly memUrls = new Map<string, UrlRow[]>();

  /** Records in the middle of the files whose checksum failed when they were read (skipped). */
  damagedRecords = 0;
  private readonly countDamaged = (): void => {
    this.damagedRecords++;
  };

  private constructor(dir: string | null, now: number, opts: SegmentOptions) {
    this.journal = dir ? new AppendLog(join(dir, "store", "journal.jsonl")) : null;
    this.documents = new EmbeddedDocuments(dir ? join(dir, "store") : null, now, opts);
    this.urlLogs = dir ? new UrlLogs(join(dir, "store")) : null;
    this.listings = dir ? new DiskUrlListings(join(dir, "store", "urls")) : null;
    this.urlListings = this.listings && this.urlLogs ? new EmbeddedUrlListings(this.listings, this.urlLogs) : undefined;
  }

  /** Opens the store in `dir` (null: memory only), dropping crawls expired before `now`. */
  static async open(dir: string | null, now: number, opts: SegmentOptions = {}): Promise<EmbeddedCrawlStore> {
    const store = new EmbeddedCrawlStore(dir, now, opts);
    await store.load(now);
    return store;
  }

  private async load(now: number): Promise<void> {
    if (!this.journal || !this.urlLogs) return;
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
    await this.documents.load((id) => isStandaloneJob(id) || this.crawls.has(id), this.countDamaged);
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
    await this.documents.reclaim(now);
    this.journal.size = await sizeOf(this.journal.path);
  }

  /** Rewrites a log with the records `keep` accepts, streamed (a store may be larger than memory would hold). */
  private async compact(log: AppendLog, keep: (line: string) => boolean): Promise<void> {
    await log.rewriteFrom((async function* () {
      for await (const { line } of readLines(log.path)) if (keep(line)) yield line;
    })());
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

  private async write(entry: JournalEntry): Promise<void> {
    if (this.journal) await this.journal.append([JSON.stringify(entry)]).written;
  }

  async getCrawl(crawlId: string): Promise<CrawlRecord | null> {
    return this.current(crawlId);
  }

  private current(crawlId: string): CrawlRecord | null {
    const c = this.crawls.get(crawlId);
    if (!c) return null;
    return { ...c, status: c.status === "scraping" && this.cancels.has(crawlId) ? "cancelled" : c.status };
  }

  async saveCrawls(records: CrawlRecord[]): Promise<void> {
    for (const r of records) await this.write({ t: "crawl", r });
    for (const r of records) this.applyCrawl(r);
    // a crawl that ended has its URL listing built now, off the request path of its first reader
    for (const r of records) {
      const c = r.status === "scraping" ? null : this.current(r.crawlId);
      if (c && c.status !== "scraping") this.urlListings?.finished(c);
    }
  }

  async cancelCrawl(crawlId: string, at: number): Promise<void> {
    await this.write({ t: "cancel", id: crawlId, at });
    this.cancels.set(crawlId, at);
  }

  async cancelled(crawlIds: string[]): Promise<Set<string>> {
    return new Set(crawlIds.filter((id) => this.cancels.has(id)));
  }

  async ended(crawlIds: string[]): Promise<Set<string>> {
    return new Set(crawlIds.filter((id) => this.cancels.has(id) || (this.crawls.get(id)?.status ?? "scraping") !== "scraping"));
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
    await this.documents.insert(rows);
  }

  async documentKeys(crawlId: string): Promise<DocumentKeys> {
    return this.documents.keys(crawlId);
  }

  async pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    return this.documents.page(crawlId, skip, maxBytes, maxDocs);
  }

  async scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined> {
    return this.documents.scrapeDocument(jobId, storedSince);
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
    for (const id of ids) this.urlListings?.remove(id);
    for (const id of this.urlLogs?.openCrawls() ?? []) if (this.crawls.get(id)?.status !== "scraping") await this.urlLogs?.release(id);
    for (const [k, at] of this.idem) if (at < now - retentionMs) this.idem.delete(k);
    for (const [id, index] of this.documents.entries()) {
      // (an empty one, its first row's write failed, goes too: row 0 cannot be read)
      if (isStandaloneJob(id) && this.crawls.get(id) === undefined && (index.size === 0 || index.storedAtOf(0, now) < now - retentionMs)) this.forget(id);
      // a crawl no longer written to gives back its key fingerprints (loaded again if a late page comes)
      else if (this.crawls.get(id)?.status !== "scraping") index.release();
    }
    await this.documents.reclaim(now);
    return ids;
  }

  async runningCrawlIds(): Promise<string[]> {
    return [...this.crawls.values()].filter((c) => c.status === "scraping" && !this.cancels.has(c.crawlId)).map((c) => c.crawlId);
  }

  /** Bytes of torn last records dropped when the files were opened (a crash in the middle of a write). */
  get repairedBytes(): number {
    return (this.journal?.repairedBytes ?? 0) + this.documents.repairedBytes;
  }

  async usageByCrawl(teamId: string): Promise<Map<string, JobUsage>> {
    return new Map([...this.crawls.values()].filter((c) => c.teamId === teamId).map((c) => [c.crawlId, crawlUsage(c)]));
  }

  private forget(id: string): void {
    this.crawls.delete(id);
    this.documents.forget(id);
    this.errors.delete(id);
    this.deliveries.delete(id);
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
    for (const [crawlId, index] of this.documents.entries()) {
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
    for (const [crawlId, index] of this.documents.entries()) {
      if (!this.ownedBy(teamId, crawlId)) continue;
      for (let from = 0; from < index.size; from += 256) {
        const rows = index.range(from, 256).filter((r) => (Number.isNaN(r.storedAt) ? 0 : r.storedAt) >= since);
        const docs = await this.documents.read(crawlId, rows);
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
    await this.urlListings?.settle();
    await this.urlLogs?.close();
    await this.journal?.close();
    await this.documents.close();
  }
}
