// ClickHouse adapter of the CrawlStore port.
import type { ClickHouseClient } from "./clickhouse.ts";
import type { CrawlRecord, CrawlStatus, CrawlStore, DeliveryRow, DocumentKeys, DocumentPage, DocumentRow, ErrorRow, ExpiredCrawl, JobUsage, SearchCandidates, UrlRow, UrlState } from "./crawl-store.ts";
import { fitChunk } from "./paging.ts";
import { join, list, raw, sql } from "./sql.ts";
import { randomUUID } from "node:crypto";
import { RETENTION_MS, SCRAPE_JOB_PREFIX, TEAM_BYPASS } from "../runtime/constants.ts";
import { dropExpiredDays, readTable } from "./clickhouse-retention.ts";
import type { ReasonCounts, UrlReason } from "./url-reason.ts";

const CRAWL_COLUMNS = [
  "crawl_id", "version", "team_id", "url", "options", "webhook", "status", "total", "completed", "failed",
  "credits_used", "discovery_done", "created_at", "updated_at", "completed_at", "expires_at", "error", "tokens_used", "url_reasons",
];

interface CrawlRowJson {
  crawl_id: string; version: number; team_id: string; url: string; options: string; webhook: string; status: string;
  total: number; completed: number; failed: number; credits_used: number; discovery_done: number;
  created_at: number; updated_at: number; completed_at: number; expires_at: number; error: string; tokens_used: number; url_reasons?: string;
}

const n = (v: unknown): number => Number(v);

/** Rows a page read fetches at least per round (seq, key and size only), so runs of duplicates cost few rounds. */
const PAGE_CANDIDATES = 256;

export class ClickHouseCrawlStore implements CrawlStore {
  private readonly ch: ClickHouseClient;
  /** retained tables whose unpartitioned predecessor is still there (what `migrate` returned): read with it */
  private readonly legacy: Set<string>;
  constructor(ch: ClickHouseClient, legacy: ReadonlySet<string> = new Set()) {
    this.ch = ch;
    this.legacy = new Set(legacy);
  }

  private t(name: string) {
    return readTable(this.ch, name, this.legacy);
  }

  /** The crawl is not one the retention sweep found expired (its rows stay until their days are dropped). */
  private notExpired(crawlId: string) {
    return sql`${crawlId} NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")} WHERE crawl_id = ${crawlId})`;
  }

  async getCrawl(crawlId: string): Promise<CrawlRecord | null> {
    // one round trip: the latest version and whether a cancel was recorded
    const rows = await this.ch.query<CrawlRowJson & { is_cancelled: number }>(
      sql`SELECT ${raw(CRAWL_COLUMNS.join(", "))}, crawl_id IN (SELECT crawl_id FROM ${this.t("crawl_cancels")} WHERE crawl_id = ${crawlId}) AS is_cancelled
          FROM ${this.t("crawls")} WHERE crawl_id = ${crawlId} AND ${this.notExpired(crawlId)} ORDER BY version DESC LIMIT 1`,
    );
    const row = rows[0];
    if (!row) return null;
    const record = fromRow(row);
    if (record.status === "scraping" && Number(row.is_cancelled) === 1) record.status = "cancelled";
    return record;
  }

  async saveCrawls(records: CrawlRecord[]): Promise<void> {
    await this.ch.insert("crawls", CRAWL_COLUMNS, records.map((r) => [
      r.crawlId, r.version, r.teamId, r.url, JSON.stringify(r.options), r.webhook, r.status, r.total, r.completed, r.failed,
      r.creditsUsed, r.discoveryDone ? 1 : 0, r.createdAt, r.updatedAt, r.completedAt, r.expiresAt, r.error, r.tokensUsed,
      r.reasons ? JSON.stringify(r.reasons) : "",
    ]));
  }

  async cancelCrawl(crawlId: string, at: number): Promise<void> {
    await this.ch.insert("crawl_cancels", ["crawl_id", "cancelled_at"], [[crawlId, at]]);
  }

  async cancelled(crawlIds: string[]): Promise<Set<string>> {
    if (crawlIds.length === 0) return new Set();
    const rows = await this.ch.query<{ crawl_id: string }>(
      sql`SELECT DISTINCT crawl_id FROM ${this.t("crawl_cancels")} WHERE crawl_id IN (${list(crawlIds)})`,
    );
    return new Set(rows.map((r) => r.crawl_id));
  }

  async ended(crawlIds: string[]): Promise<Set<string>> {
    if (crawlIds.length === 0) return new Set();
    // the latest version's status (the one getCrawl reads); a cancel recorded while it was still scraping counts
    const [cancelled, finished] = await Promise.all([
      this.cancelled(crawlIds),
      this.ch.query<{ crawl_id: string }>(
        sql`SELECT crawl_id FROM ${this.t("crawls")} WHERE crawl_id IN (${list(crawlIds)})
            GROUP BY crawl_id HAVING argMax(status, version) IN ('completed', 'failed', 'cancelled')`,
      ),
    ]);
    for (const r of finished) cancelled.add(r.crawl_id);
    return cancelled;
  }

  async saveUrls(rows: UrlRow[]): Promise<void> {
    await this.ch.insert("frontier_urls", ["crawl_id", "url_key", "url", "depth", "state", "version", "reason", "detail", "from_url", "attempts"],
      rows.map((r) => [r.crawlId, r.urlKey, r.url, r.depth, r.state, r.version, r.reason ?? "", r.detail ?? "", r.from ?? "", r.attempts ?? 0]));
  }

  async loadUrls(crawlId: string): Promise<UrlRow[]> {
    // the latest state, reason and detail; the URL and where it was found from the latest row that has them (a
    // PageDone's row has neither)
    const rows = await this.ch.query<{ url_key: string; last_url: string; last_depth: number; last_state: number; last_version: number; last_reason: string; last_detail: string; last_from: string; last_attempts: number }>(
      sql`SELECT url_key, argMaxIf(url, version, url != '') AS last_url, argMax(depth, version) AS last_depth, argMax(state, version) AS last_state,
            max(version) AS last_version, argMax(reason, version) AS last_reason, argMax(detail, version) AS last_detail,
            argMaxIf(from_url, version, from_url != '') AS last_from, argMax(attempts, version) AS last_attempts
          FROM ${this.t("frontier_urls")} WHERE crawl_id = ${crawlId} GROUP BY url_key`,
    );
    return rows.map((r) => ({
      crawlId, urlKey: r.url_key, url: r.last_url, depth: n(r.last_depth), state: n(r.last_state) as UrlState, version: n(r.last_version),
      ...(r.last_reason ? { reason: r.last_reason as UrlReason, detail: r.last_detail, from: r.last_from } : {}),
      ...(n(r.last_attempts) > 0 ? { attempts: n(r.last_attempts) } : {}),
    }));
  }

  async insertDocuments(rows: DocumentRow[]): Promise<void> {
    await this.ch.insert("documents",
      ["crawl_id", "seq", "url_key", "final_key", "scrape_id", "url", "status_code", "bytes", "credits", "stored_at", "doc"],
      rows.map((r) => [r.crawlId, r.seq, r.urlKey, r.finalKey, r.scrapeId, r.url, r.statusCode, Buffer.byteLength(r.doc), r.credits, r.storedAt, r.doc]));
  }

  /**
   * Read on every live replica (one server: the server): the sink loads this after a start or a rebalance, when the
   * pages the partition's previous owner stored just before may not have reached the replica this client reads yet.
   * Rows only a replica that is down holds are not seen (docs/architecture.md, "Known hazard").
   */
  async documentKeys(crawlId: string): Promise<DocumentKeys> {
    const rows = (await this.ch.queryEvery<{ url_key: string; final_key: string; seq: number }>(
      sql`SELECT url_key, final_key, seq FROM ${this.t("documents")} WHERE crawl_id = ${crawlId}`,
    )).flat();
    const nextSeq = rows.reduce((max, r) => Math.max(max, n(r.seq) + 1), 0);
    return { nextSeq, keys: rows.map((r) => r.url_key), seqs: rows.map((r) => n(r.seq)), finalKeys: rows.map((r) => r.final_key || r.url_key) };
  }

  async pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage> {
    // The first url_key occurrence wins, so a duplicate row (a replay that raced a rebalance) is never shown. Only the
    // keys of the rows read are looked up, and only up to the last of them: a read costs the rows before and in the
    // page, not a GROUP BY over the whole crawl (that made a status read of a 100,000-page crawl take ~100 ms).
    // Candidates come PAGE_CANDIDATES at least at a time, so a run of duplicates costs one more round, not one each.
    const kept: { seq: number; urlKey: string; bytes: number }[] = [];
    for (let from = skip; kept.length <= maxDocs; ) {
      const want = Math.max(maxDocs + 1 - kept.length, PAGE_CANDIDATES);
      const rows = await this.ch.query<{ seq: number; url_key: string; bytes: number }>(
        sql`SELECT seq, url_key, bytes FROM ${this.t("documents")} WHERE crawl_id = ${crawlId} AND seq >= ${from} AND ${this.notExpired(crawlId)} ORDER BY seq LIMIT ${want}`,
      );
      if (rows.length === 0) break;
      const last = n(rows[rows.length - 1]?.seq);
      const firsts = await this.ch.query<{ url_key: string; first: number }>(
        sql`SELECT url_key, min(seq) AS first FROM ${this.t("documents")} WHERE crawl_id = ${crawlId} AND seq <= ${last}
              AND url_key IN (SELECT url_key FROM ${this.t("documents")} WHERE crawl_id = ${crawlId} AND seq >= ${from} AND seq <= ${last})
            GROUP BY url_key`,
      );
      const first = new Map(firsts.map((f) => [f.url_key, n(f.first)]));
      for (const r of rows) {
        if (kept.length > maxDocs) break;
        if (first.get(r.url_key) === n(r.seq)) kept.push({ seq: n(r.seq), urlKey: r.url_key, bytes: n(r.bytes) });
      }
      if (rows.length < want) break;
      from = last + 1;
    }
    const take = fitChunk(kept.map((k) => k.bytes), maxBytes, maxDocs);
    if (take === 0) return { docs: [], nextSkip: skip, more: false };
    const shown = kept.slice(0, take);
    const lastSeq = n(shown[take - 1]?.seq);
    // the rows of the range whose (seq, url_key) was kept: a duplicate is left out even when it shares a seq
    const wanted = new Set(shown.map((k) => `${k.seq}\n${k.urlKey}`));
    const rows = await this.ch.query<{ seq: number; url_key: string; doc: string }>(
      sql`SELECT seq, url_key, doc FROM ${this.t("documents")} WHERE crawl_id = ${crawlId} AND seq >= ${n(shown[0]?.seq)} AND seq <= ${lastSeq} ORDER BY seq`,
    );
    const docs = rows.filter((r) => wanted.has(`${n(r.seq)}\n${r.url_key}`)).map((r) => r.doc);
    return { docs, nextSkip: lastSeq + 1, more: kept.length > take };
  }

  async scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined> {
    const rows = await this.ch.query<{ doc: string }>(
      sql`SELECT doc FROM ${this.t("documents")} WHERE crawl_id = ${jobId} AND stored_at >= ${storedSince} ORDER BY seq LIMIT 1`,
    );
    return rows[0]?.doc;
  }

  async activeCrawls(teamId: string): Promise<CrawlRecord[]> {
    const rows = await this.ch.query<CrawlRowJson>(
      sql`SELECT ${raw(CRAWL_COLUMNS.join(", "))} FROM ${this.t("crawls")}
          WHERE team_id = ${teamId} AND (crawl_id, version) IN (
            SELECT crawl_id, max(version) FROM ${this.t("crawls")} WHERE team_id = ${teamId} GROUP BY crawl_id)
          AND status = 'scraping'
          AND crawl_id NOT IN (SELECT crawl_id FROM ${this.t("crawl_cancels")})
          AND crawl_id NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")})
          ORDER BY created_at DESC LIMIT 1000`,
    );
    return rows.map(fromRow);
  }

  async insertErrors(rows: ErrorRow[]): Promise<void> {
    await this.ch.insert("crawl_errors", ["crawl_id", "url_key", "url", "code", "error", "status_code", "at"],
      rows.map((r) => [r.crawlId, r.urlKey, r.url, r.code, r.error, r.statusCode, r.at]));
  }

  async listErrors(crawlId: string): Promise<ErrorRow[]> {
    const rows = await this.ch.query<{ url_key: string; e_url: string; e_code: string; e_error: string; e_status: number; e_at: number }>(
      sql`SELECT url_key, argMax(url, at) AS e_url, argMax(code, at) AS e_code, argMax(error, at) AS e_error,
            argMax(status_code, at) AS e_status, max(at) AS e_at
          FROM ${this.t("crawl_errors")} WHERE crawl_id = ${crawlId} GROUP BY url_key ORDER BY e_at`,
    );
    return rows.map((r) => ({ crawlId, urlKey: r.url_key, url: r.e_url, code: r.e_code, error: r.e_error, statusCode: n(r.e_status), at: n(r.e_at) }));
  }

  /**
   * Hands the crawls that expired since the last sweep to `beforeDelete` (the credit ledger), marks them expired (reads
   * skip them from then on), then drops the whole days that hold only expired rows (`dropExpiredDays`): no mutation,
   * nothing rewritten. Single scrapes, screenshots and idempotency keys leave with their day once it is past retention
   * (reads already ignore them after the retention: `scrapeDocument`, `claimIdempotencyKey`).
   */
  async deleteExpired(now: number, retentionMs: number, beforeDelete?: (crawls: ExpiredCrawl[]) => Promise<void>): Promise<string[]> {
    const rows = await this.ch.query<{ crawl_id: string; team_id: string; credits_used: unknown; tokens_used: unknown; created_at: unknown }>(
      sql`SELECT crawl_id, argMax(team_id, version) AS team_id, argMax(credits_used, version) AS credits_used, argMax(tokens_used, version) AS tokens_used,
            min(created_at) AS created_at FROM ${this.t("crawls")} WHERE crawl_id NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")}) GROUP BY crawl_id
          HAVING argMax(status, version) != 'scraping' AND argMax(expires_at, version) < ${now} LIMIT 10000`,
    );
    const ids = rows.map((r) => r.crawl_id);
    if (beforeDelete && rows.length) {
      await beforeDelete(rows.map((r) => ({ crawlId: r.crawl_id, teamId: r.team_id, creditsUsed: n(r.credits_used), tokensUsed: n(r.tokens_used), createdAt: n(r.created_at) })));
    }
    if (ids.length) await this.ch.insert("expired_crawls", ["crawl_id", "at"], ids.map((id) => [id, now]));
    // live: not marked expired (running, within retention, or expired beyond this sweep's LIMIT); stored: with a version left
    const stored = sql`SELECT DISTINCT crawl_id FROM ${this.t("crawls")}`;
    const live = sql`SELECT DISTINCT crawl_id FROM ${this.t("crawls")} WHERE crawl_id NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")})`;
    await dropExpiredDays(this.ch, now, retentionMs, { live, stored }, this.legacy);
    return ids;
  }

  /** Check, insert, then read the earliest claim back: of two racing claims exactly one sees its own first. */
  async claimIdempotencyKey(teamId: string, key: string, at: number): Promise<boolean> {
    const first = () => this.ch.query<{ claim_id: string }>(
      sql`SELECT claim_id FROM ${this.t("idempotency_keys")} WHERE team_id = ${teamId} AND key = ${key} AND at >= ${at - RETENTION_MS} ORDER BY at, claim_id LIMIT 1`,
    );
    if ((await first()).length > 0) return false;
    const claimId = randomUUID();
    await this.ch.insert("idempotency_keys", ["team_id", "key", "claim_id", "at"], [[teamId, key, claimId, at]]);
    return (await first())[0]?.claim_id === claimId;
  }

  async runningCrawlIds(): Promise<string[]> {
    const rows = await this.ch.query<{ crawl_id: string }>(
      sql`SELECT crawl_id FROM ${this.t("crawls")} WHERE crawl_id NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")})
          GROUP BY crawl_id HAVING argMax(status, version) = 'scraping' AND crawl_id NOT IN (SELECT crawl_id FROM ${this.t("crawl_cancels")})`,
    );
    return rows.map((r) => r.crawl_id);
  }

  async usageByCrawl(teamId: string): Promise<Map<string, JobUsage>> {
    const rows = await this.ch.query<{ crawl_id: string; c: unknown; tk: unknown; at: unknown }>(
      sql`SELECT crawl_id, argMax(credits_used, version) AS c, argMax(tokens_used, version) AS tk, min(created_at) AS at
          FROM ${this.t("crawls")} WHERE team_id = ${teamId} AND crawl_id NOT IN (SELECT crawl_id FROM ${this.t("expired_crawls")}) GROUP BY crawl_id`,
    );
    return new Map(rows.map((r) => [r.crawl_id, { credits: n(r.c), tokens: n(r.tk), at: n(r.at) }]));
  }

  async logDeliveries(rows: DeliveryRow[]): Promise<void> {
    await this.ch.insert("webhook_deliveries", ["crawl_id", "event_id", "event", "url", "status_code", "attempt", "error", "at"],
      rows.map((r) => [r.crawlId, r.eventId, r.event, r.url, r.statusCode, r.attempt, r.error, r.at]));
  }

  async listDeliveries(crawlId: string): Promise<DeliveryRow[]> {
    const rows = await this.ch.query<{ event_id: string; event: string; url: string; status_code: number; attempt: number; error: string; at: number }>(
      sql`SELECT event_id, event, url, status_code, attempt, error, at FROM ${this.t("webhook_deliveries")} WHERE crawl_id = ${crawlId} ORDER BY at, attempt`,
    );
    return rows.map((r) => ({ crawlId, eventId: r.event_id, event: r.event, url: r.url, statusCode: n(r.status_code), attempt: n(r.attempt), error: r.error, at: n(r.at) }));
  }

  /** Documents of a team: of its crawls and batches, and its single scrapes. */
  private ownedBy(teamId: string) {
    const scrapes = teamId === TEAM_BYPASS
      ? sql`(startsWith(crawl_id, ${SCRAPE_JOB_PREFIX}) AND position(substring(crawl_id, ${SCRAPE_JOB_PREFIX.length + 1}), ':') = 0)`
      : sql`startsWith(crawl_id, ${`${SCRAPE_JOB_PREFIX}${teamId}:`})`;
    return sql`(crawl_id IN (SELECT crawl_id FROM ${this.t("crawls")} WHERE team_id = ${teamId}) OR ${scrapes})`;
  }

  async mostRecentSuccess(teamId: string, since: number): Promise<number | null> {
    const rows = await this.ch.query<{ at: number; docs: number }>(
      sql`SELECT max(stored_at) AS at, count() AS docs FROM ${this.t("documents")} WHERE status_code < 400 AND stored_at >= ${since} AND ${this.ownedBy(teamId)}`,
    );
    return n(rows[0]?.docs ?? 0) > 0 ? n(rows[0]?.at) : null;
  }

  async searchCandidates(teamId: string, terms: string[], since: number, maxDocs: number): Promise<SearchCandidates> {
    if (terms.length === 0) return { corpus: 0, df: [], docs: [] };
    const owned = this.ownedBy(teamId);
    // the ASCII variant is several times faster on ClickHouse 18.16; non-ASCII terms need the UTF-8 case folding
    const has = terms.map((t) => (/^[ -~]*$/.test(t) ? sql`(positionCaseInsensitive(doc, ${t}) > 0)` : sql`(positionCaseInsensitiveUTF8(doc, ${t}) > 0)`));
    const counts = await this.ch.query<Record<string, number>>(
      sql`SELECT count() AS corpus, ${join(has.map((h, i) => sql`countIf(${h}) AS ${raw(`df${i}`)}`), ", ")}
          FROM ${this.t("documents")} WHERE stored_at >= ${since} AND ${owned}`,
    );
    const row = counts[0] ?? {};
    const docs = await this.ch.query<{ doc: string }>(
      sql`SELECT doc FROM ${this.t("documents")} WHERE stored_at >= ${since} AND ${owned} AND (${join(has, " OR ")})
          ORDER BY ${join(has.map((h) => sql`toUInt8(${h})`), " + ")} DESC, stored_at DESC LIMIT ${maxDocs}`,
    );
    return { corpus: n(row.corpus ?? 0), df: terms.map((_, i) => n(row[`df${i}`] ?? 0)), docs: docs.map((d) => d.doc) };
  }
}

function fromRow(row: CrawlRowJson): CrawlRecord {
  return {
    crawlId: row.crawl_id,
    version: n(row.version),
    teamId: row.team_id,
    url: row.url,
    options: JSON.parse(row.options),
    webhook: row.webhook,
    status: row.status as CrawlStatus,
    total: n(row.total),
    completed: n(row.completed),
    failed: n(row.failed),
    creditsUsed: n(row.credits_used),
    tokensUsed: n(row.tokens_used ?? 0),
    discoveryDone: n(row.discovery_done) === 1,
    createdAt: n(row.created_at),
    updatedAt: n(row.updated_at),
    completedAt: n(row.completed_at),
    expiresAt: n(row.expires_at),
    error: row.error,
    ...(row.url_reasons ? { reasons: JSON.parse(row.url_reasons) as ReasonCounts } : {}),
  };
}
