// ClickHouse adapter of the PageCache port: table page_cache, written in batches (one INSERT per flush, so a busy
// fetch-render does not create a part per page), read by key.
import type { ClickHouseClient } from "./clickhouse.ts";
import type { CachedPage, PageCache } from "./page-cache.ts";
import { raw, sql } from "./sql.ts";
import { LEGACY_SUFFIX, dropDaysBefore, dropTable } from "./clickhouse-retention.ts";
import type { Logger } from "../runtime/logger.ts";

const COLUMNS = ["key", "url", "final_url", "status_code", "content_type", "body", "body_base64", "stored_at"];

export class ClickHousePageCache implements PageCache {
  private readonly ch: ClickHouseClient;
  private readonly log: Logger;
  private queued: CachedPage[] = [];
  /** Batches being inserted: still read from here, so a page is never missing between the queue and the table. */
  private readonly inserting = new Set<CachedPage[]>();
  private queuedBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  private readonly flushMs: number;
  private readonly flushBytes: number;

  constructor(ch: ClickHouseClient, log: Logger, flushMs = 500, flushBytes = 8 * 1024 * 1024) {
    this.ch = ch;
    this.flushMs = flushMs;
    this.flushBytes = flushBytes;
    this.log = log.child({ component: "page-cache" });
  }

  async get(key: string, notBefore: number): Promise<CachedPage | null> {
    const waiting = [...this.inserting, this.queued].flat().filter((p) => p.key === key && p.storedAt >= notBefore).at(-1);
    if (waiting) return waiting;
    const rows = await this.ch.query<{ key: string; url: string; final_url: string; status_code: number; content_type: string; body: string; body_base64: string; stored_at: number }>(
      sql`SELECT ${raw(COLUMNS.join(", "))} FROM ${raw(this.ch.table("page_cache"))} WHERE key = ${key} AND stored_at >= ${notBefore} ORDER BY stored_at DESC LIMIT 1`,
    );
    const r = rows[0];
    if (!r) return null;
    return {
      key: r.key, url: r.url, finalUrl: r.final_url, statusCode: Number(r.status_code), contentType: r.content_type, body: r.body,
      ...(r.body_base64 ? { bodyBase64: r.body_base64 } : {}), storedAt: Number(r.stored_at),
    };
  }

  put(pages: CachedPage[]): void {
    for (const p of pages) {
      this.queued.push(p);
      this.queuedBytes += p.body.length + (p.bodyBase64?.length ?? 0);
    }
    if (this.queuedBytes >= this.flushBytes) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  private flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queued;
    this.queued = [];
    this.queuedBytes = 0;
    if (batch.length === 0) return this.flushing;
    this.inserting.add(batch);
    this.flushing = this.flushing.then(() =>
      this.ch.insert("page_cache", COLUMNS, batch.map((p) => [p.key, p.url, p.finalUrl, p.statusCode, p.contentType, p.body, p.bodyBase64 ?? "", p.storedAt]))
        .catch((err: Error) => this.log.warn({ err: err.message, pages: batch.length }, "page cache write failed; those pages will be fetched again"))
        .finally(() => this.inserting.delete(batch)),
    );
    return this.flushing;
  }

  /**
   * Drops the whole days older than `cutoff` (no mutation); reads skip the older rows of a younger day (`notBefore`).
   * Also drops the table from before partitioning, which nothing reads (migrations.ts leaves it to this sweep).
   */
  async deleteBefore(cutoff: number): Promise<void> {
    await dropDaysBefore(this.ch, "page_cache", cutoff);
    await dropTable(this.ch, `page_cache${LEGACY_SUFFIX}`);
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
