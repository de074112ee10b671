// Embedded adapter of the CrawlStore port: no server, two JSON-lines files under the data directory.
// journal.jsonl holds crawl versions, cancels, URL states and errors; documents.jsonl holds documents, which stay
// on disk (memory keeps only an index). Both are replayed at start, so a restart keeps every crawl until it expires.
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { CrawlRecord, CrawlStore, DeliveryRow, DocumentPage, DocumentRow, ErrorRow, ExpiredCrawl, SearchCandidates, UrlRow } from "./crawl-store.ts";
import { AppendLog, FileReader, readLines } from "../runtime/append-log.ts";
import { fitChunk } from "./paging.ts";
import { isScrapeJob, isStandaloneJob, isTeamScrape, RETENTION_MS } from "../runtime/constants.ts";

interface DocRef {
  storedAt?: number;
  seq: number;
  urlKey: string;
  finalKey: string;
  pos: number;
  len: number;
  /** the document's JSON sits at [pos + docStart, pos + len) of its line */
  docStart: number;
}

type JournalEntry =
  | { t: "crawl"; r: CrawlRecord }
  | { t: "cancel"; id: string; at: number }
  | { t: "urls"; rows: UrlRow[] }
  | { t: "errors"; rows: ErrorRow[] }
  | { t: "deliveries"; rows: DeliveryRow[] }
  | { t: "idem"; team: string; key: string; at: number };

const newer = (a: CrawlRecord, b: CrawlRecord | undefined) => !b || a.version > b.version || (a.version === b.version && a.updatedAt >= b.updatedAt);

export class EmbeddedCrawlStore implements CrawlStore {
  private readonly journal: AppendLog | null;
  private readonly docsLog: AppendLog | null;
  /** one handle for every document read (opened after start-up compaction) */
  private docsReader: FileReader | null = null;
  private readonly crawls = new Map<string, CrawlRecord>();
  private readonly cancels = new Map<string, number>();
  private readonly docs = new Map<string, DocRef[]>();
  private readonly docKeys = new Map<string, Set<string>>();
  private readonly errors = new Map<string, Map<string, ErrorRow>>();
  private readonly deliveries = new Map<string, DeliveryRow[]>();
  /** idempotency keys (team + key) -> when claimed */
  private readonly idem = new Map<string, number>();
  /** when the newest document with a status below 400 was stored */
  private lastSuccessAt: number | null = null;
  /** memory-only mode keeps URL rows and documents here */
  private readonly memUrls = new Map<string, UrlRow[]>();
  private readonly memDocs = new Map<string, string[]>();

  /** Records in the middle of the files whose checksum failed when they were read (skipped). */
  damagedRecords = 0;
  private readonly countDamaged = (): void => {
    this.damagedRecords++;
  };

  private constructor(dir: string | null) {
    this.journal = dir ? new AppendLog(join(dir, "store", "journal.jsonl")) : null;
    this.docsLog = dir ? new AppendLog(join(dir, "store", "documents.jsonl")) : null;
  }

  /** Opens the store in `dir` (null: memory only), dropping crawls expired before `now`. */
  static async open(dir: string | null, now: number): Promise<EmbeddedCrawlStore> {
    const store = new EmbeddedCrawlStore(dir);
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
      // retention: rewrite both files without the expired crawls, then index the documents again
      await this.compact(this.journal, (line) => {
        try {
          return !expired.has(journalCrawlId(JSON.parse(line) as JournalEntry));
        } catch {
          return false;
        }
      });
      await this.compact(this.docsLog, (line) => !expired.has(docCrawlId(line)));
      this.docs.clear();
      this.docKeys.clear();
      await this.indexDocuments();
    }
    this.journal.size = await sizeOf(this.journal.path);
    this.docsLog.size = await sizeOf(this.docsLog.path);
  }

  private async compact(log: AppendLog, keep: (line: string) => boolean): Promise<void> {
    const kept: string[] = [];
    for await (const { line } of readLines(log.path)) if (keep(line)) kept.push(line);
    await log.rewrite(kept);
  }

  private async indexDocuments(): Promise<void> {
    if (!this.docsLog) return;
    for await (const { line, pos, len } of readLines(this.docsLog.path, this.countDamaged)) {
      let head: { c: string; s: number; k: string; f?: string; t?: number; sc?: number };
      try {
        head = JSON.parse(line.slice(0, line.indexOf(',"d":')) + "}");
        JSON.parse(line);
      } catch {
        continue;
      }
      if (!isStandaloneJob(head.c) && !this.crawls.has(head.c)) continue; // a crawl that expired
      const docStart = Buffer.byteLength(line.slice(0, line.indexOf(',"d":') + 5));
      this.addDocRef(head.c, { seq: head.s, urlKey: head.k, finalKey: head.f ?? head.k, pos, len, docStart, storedAt: head.t });
      if ((head.sc ?? 200) < 400) this.noteSuccess(head.t);
    }
  }

  private applyCrawl(r: CrawlRecord): void {
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

  private noteSuccess(at: number | undefined): void {
    if (at !== undefined && (this.lastSuccessAt === null || at > this.lastSuccessAt)) this.lastSuccessAt = at;
  }

  private addDocRef(crawlId: string, ref: DocRef): void {
    const keys = this.docKeys.get(crawlId) ?? new Set<string>();
    this.docKeys.set(crawlId, keys);
    if (keys.has(ref.urlKey)) return; // the first row of a url key wins
    keys.add(ref.urlKey);
    const list = this.docs.get(crawlId) ?? [];
    list.push(ref);
    this.docs.set(crawlId, list);
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
      const prev = latest.get(r.urlKey);
      if (r.crawlId === crawlId && (!prev || r.version >= prev.version)) latest.set(r.urlKey, r);
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
    for (const r of rows) if (r.statusCode < 400) this.noteSuccess(r.storedAt);
    if (!this.docsLog) {
      for (const r of rows) {
        const list = this.memDocs.get(r.crawlId) ?? [];
        this.addDocRef(r.crawlId, { seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, pos: list.length, len: 0, docStart: 0, storedAt: r.storedAt });
        list.push(r.doc);
        this.memDocs.set(r.crawlId, list);
      }
      return;
    }
    const lines = rows.map((r) => `${JSON.stringify({ c: r.crawlId, s: r.seq, k: r.urlKey, f: r.finalKey, t: r.storedAt, sc: r.statusCode }).slice(0, -1)},"d":${r.doc}}`);
    const { positions, written } = this.docsLog.append(lines);
    await written;
    rows.forEach((r, i) => {
      const line = lines[i] as string;
      const docStart = Buffer.byteLength(line.slice(0, line.indexOf(',"d":') + 5));
      this.addDocRef(r.crawlId, { seq: r.seq, urlKey: r.urlKey, finalKey: r.finalKey, pos: positions[i] as number, len: Buffer.byteLength(line), docStart, storedAt: r.storedAt });
    });
  }

  async documentKeys(crawlId: string): Promise<{ nextSeq: number; keys: string[]; finalKeys: string[] }> {
    const list = this.docs.get(crawlId) ?? [];
    return { nextSeq: list.reduce((m, d) => Math.max(m, d.seq + 1), 0), keys: [...(this.docKeys.get(crawlId) ?? [])], finalKeys: list.map((d) => d.finalKey) };
  }

  private async readDoc(crawlId: string, ref: DocRef): Promise<string> {
    if (!this.docsLog) return (this.memDocs.get(crawlId) ?? [])[ref.pos] as string;
    this.docsReader ??= new FileReader(this.docsLog.path);
    const bytes = await this.docsReader.read(ref.pos, ref.len);
    return bytes.subarray(ref.docStart, bytes.length - 1).toString("utf8");
  }

  async pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    // refs are appended in seq order (one sink per crawl assigns increasing seqs): binary-search the start
    const all = this.docs.get(crawlId) ?? [];
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((all[mid] as DocRef).seq < skip) lo = mid + 1;
      else hi = mid;
    }
    const list = all.slice(lo, lo + maxDocs + 1);
    const candidates = list;
    const texts: string[] = [];
    for (const ref of candidates.slice(0, maxDocs)) {
      texts.push(await this.readDoc(crawlId, ref));
      if (fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs) < texts.length) break;
    }
    const take = fitChunk(texts.map((t) => Buffer.byteLength(t)), maxBytes, maxDocs);
    if (take === 0) return { docs: [], nextSkip: skip, more: false };
    const last = candidates[take - 1] as DocRef;
    return { docs: texts.slice(0, take), nextSkip: last.seq + 1, more: list.length > take };
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

  /** Forgets expired crawls at once; their lines leave the files at the next start (see `load`). */
  async deleteExpired(now: number, retentionMs: number, beforeDelete?: (crawls: ExpiredCrawl[]) => Promise<void>): Promise<string[]> {
    const expired = [...this.crawls.values()].filter((c) => c.status !== "scraping" && c.expiresAt < now);
    if (beforeDelete && expired.length) await beforeDelete(expired.map((c) => ({ crawlId: c.crawlId, teamId: c.teamId, creditsUsed: c.creditsUsed })));
    const ids = expired.map((c) => c.crawlId);
    for (const id of ids) this.forget(id);
    for (const [k, at] of this.idem) if (at < now - retentionMs) this.idem.delete(k);
    for (const [id, refs] of this.docs) {
      if (isStandaloneJob(id) && this.crawls.get(id) === undefined && (refs[0]?.storedAt ?? now) < now - retentionMs) this.forget(id);
    }
    return ids;
  }

  async runningCrawlIds(): Promise<string[]> {
    return [...this.crawls.values()].filter((c) => c.status === "scraping" && !this.cancels.has(c.crawlId)).map((c) => c.crawlId);
  }

  /** Bytes of torn last records dropped when the files were opened (a crash in the middle of a write). */
  get repairedBytes(): number {
    return (this.journal?.repairedBytes ?? 0) + (this.docsLog?.repairedBytes ?? 0);
  }

  async creditsByCrawl(teamId: string): Promise<Map<string, number>> {
    return new Map([...this.crawls.values()].filter((c) => c.teamId === teamId).map((c) => [c.crawlId, c.creditsUsed]));
  }

  private forget(id: string): void {
    this.crawls.delete(id);
    this.docs.delete(id);
    this.docKeys.delete(id);
    this.errors.delete(id);
    this.deliveries.delete(id);
    this.memDocs.delete(id);
    this.memUrls.delete(id);
  }

  async claimIdempotencyKey(teamId: string, key: string, at: number): Promise<boolean> {
    const k = JSON.stringify([teamId, key]);
    if (this.idem.has(k)) return false;
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

  async mostRecentSuccess(since: number): Promise<number | null> {
    return this.lastSuccessAt !== null && this.lastSuccessAt >= since ? this.lastSuccessAt : null;
  }

  /** Reads every document stored since `since` (the embedded mode's corpus is one machine's crawls). */
  async searchCandidates(teamId: string, terms: string[], since: number, maxDocs: number): Promise<SearchCandidates> {
    const df = terms.map(() => 0);
    const hits: { doc: string; matched: number; at: number }[] = [];
    let corpus = 0;
    for (const [crawlId, refs] of this.docs) {
      if (isScrapeJob(crawlId) ? !isTeamScrape(teamId, crawlId) : this.crawls.get(crawlId)?.teamId !== teamId) continue;
      for (const ref of refs) {
        if ((ref.storedAt ?? 0) < since) continue;
        corpus++;
        const doc = await this.readDoc(crawlId, ref);
        const lower = doc.toLowerCase();
        let matched = 0;
        terms.forEach((t, i) => {
          if (!lower.includes(t)) return;
          df[i] = (df[i] as number) + 1;
          matched++;
        });
        if (matched > 0) hits.push({ doc, matched, at: ref.storedAt ?? 0 });
      }
    }
    hits.sort((a, b) => b.matched - a.matched || b.at - a.at);
    return { corpus, df, docs: hits.slice(0, maxDocs).map((h) => h.doc) };
  }

  async close(): Promise<void> {
    await this.docsReader?.reset();
    await this.journal?.close();
    await this.docsLog?.close();
  }
}

function journalCrawlId(e: JournalEntry): string {
  if (e.t === "crawl") return e.r.crawlId;
  if (e.t === "idem") return "";
  if (e.t === "cancel") return e.id;
  return e.rows[0]?.crawlId ?? "";
}

function docCrawlId(line: string): string {
  try {
    return (JSON.parse(line.slice(0, line.indexOf(',"d":')) + "}") as { c: string }).c;
  } catch {
    return "";
  }
}

/** Bytes in a file, 0 when it does not exist. */
const sizeOf = (path: string): Promise<number> => stat(path).then((st) => st.size, () => 0);
