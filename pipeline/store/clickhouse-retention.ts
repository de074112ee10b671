// Retention in ClickHouse by whole days: the tables a crawl writes are partitioned by the UTC day a row was written, and
// the sweep drops a day once every row in it is past retention, instead of `ALTER TABLE … DELETE` mutations (which
// rewrite every part holding a matching row: at hundreds of millions of documents, most of the table on each sweep).
import type { ClickHouseClient } from "./clickhouse.ts";
import { raw, sql, type SqlFragment } from "./sql.ts";
import { retry } from "../runtime/retry.ts";
import { setTimeout as sleep } from "node:timers/promises";

export const DAY_MS = 86_400_000;

/**
 * A table whose rows leave by day: `time` (UInt64 ms) gives a row's day. `pin`: which rows keep their day past
 * retention: a live crawl's (`live`), a crawl's that still has rows in `crawls` (`stored`), or none.
 */
export interface RetainedTable {
  table: string;
  time: string;
  pin: "live" | "stored" | "none";
  /** the column holding the job (crawl) id a pin matches; crawl_id when not given */
  job?: string;
}

/**
 * Every table the retention sweep empties. A crawl writes its rows between its start and its end, and expires 24 h
 * after its end, so a day whose last millisecond is more than 24 h ago holds only rows of crawls that ended, and is
 * dropped once none of them is live: not yet marked expired by the sweep (`expired_crawls`). A marker stays while its
 * crawl has a row left in `crawls`: a crawl's versions span days, and an older version ('scraping') of a crawl whose
 * last day went would otherwise read as running again. frontier_urls has no time of its own: `written_at` is the
 * server's clock at insert (a column default).
 */
export const RETAINED: RetainedTable[] = [
  { table: "crawls", time: "updated_at", pin: "live" },
  { table: "crawl_cancels", time: "cancelled_at", pin: "live" },
  { table: "frontier_urls", time: "written_at", pin: "live" },
  { table: "documents", time: "stored_at", pin: "live" },
  { table: "crawl_errors", time: "at", pin: "live" },
  { table: "webhook_deliveries", time: "at", pin: "live" },
  { table: "idempotency_keys", time: "at", pin: "none" },
  // a crawl's screenshots are written while it runs; a scrape's (or an extract job's) with its document, by no crawl
  { table: "screenshots", time: "stored_at", pin: "live", job: "job_id" },
  { table: "expired_crawls", time: "at", pin: "stored" },
];

/** A table created before partitioning is renamed so, read together with the new one until its crawls expire. */
export const LEGACY_SUFFIX = "_unpartitioned";

/** Tables partitioned by day that are not a crawl's: the page cache, emptied of whole days past CACHE_MAX_AGE_MS. */
export const BY_DAY: Record<string, string> = { page_cache: "stored_at" };

const timeOf = (table: string): string => {
  const time = RETAINED.find((r) => r.table === table)?.time ?? BY_DAY[table];
  if (!time) throw new TypeError(`not a table partitioned by day: ${table}`);
  return time;
};

/** The PARTITION BY clause of a table partitioned by day (ClickHouse 18.16 accepts it after ORDER BY; no TTL there). */
export const partitionBy = (table: string): string => `PARTITION BY intDiv(${timeOf(table)}, ${DAY_MS})`;

/** The days of `table` (its partitions) whose every row is older than `horizon`. */
export async function pastDays(ch: ClickHouseClient, table: string, horizon: number): Promise<number[]> {
  const parts = await ch.query<{ partition: string }>(
    sql`SELECT DISTINCT partition FROM system.parts WHERE database = ${ch.database} AND table = ${table} AND active`,
  );
  return parts.map((p) => Number(p.partition)).filter((d) => Number.isInteger(d) && (d + 1) * DAY_MS <= horizon).sort((a, b) => a - b);
}

/** Drops whole days of `table` older than `horizon` (the page cache: no row is pinned). */
export async function dropDaysBefore(ch: ClickHouseClient, table: string, horizon: number): Promise<number[]> {
  const days = await pastDays(ch, table, horizon);
  for (const day of days) await ch.exec(sql`ALTER TABLE ${raw(ch.table(table))} DROP PARTITION ${day}`);
  return days;
}

/** The table to read: the table itself, or both it and its unpartitioned predecessor while that one exists. */
export function readTable(ch: ClickHouseClient, name: string, legacy: ReadonlySet<string>): SqlFragment {
  return raw(legacy.has(name) ? `merge(${ch.database}, '^${name}(${LEGACY_SUFFIX})?$')` : ch.table(name));
}

/** Retained tables that still have an unpartitioned predecessor. */
export async function legacyTables(ch: ClickHouseClient): Promise<Set<string>> {
  const rows = await retry(() => ch.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${ch.database}`),
    { retries: 10, initialMs: 20, maxMs: 500, retriable: tableVanished });
  const names = new Set(rows.map((r) => r.name));
  return new Set(RETAINED.map((r) => r.table).filter((t) => names.has(`${t}${LEGACY_SUFFIX}`)));
}

/** A read of system.tables fails when a table of the database is renamed or dropped under it (another role migrating). */
const tableVanished = (err: unknown) => /doesn't exist|does not exist/.test((err as Error)?.message ?? "");

/** DROP TABLE IF EXISTS, which 18.16 fails when another role renames or drops the table at the same moment. */
export async function dropTable(ch: ClickHouseClient, name: string): Promise<void> {
  try {
    await ch.exec(raw(`DROP TABLE IF EXISTS ${ch.table(name)}`));
  } catch (err) {
    if (!tableVanished(err)) throw err;
  }
}

async function partitionKey(ch: ClickHouseClient, table: string): Promise<string | undefined> {
  const rows = await retry(
    () => ch.query<{ partition_key: string }>(sql`SELECT partition_key FROM system.tables WHERE database = ${ch.database} AND name = ${table}`),
    { retries: 10, initialMs: 20, maxMs: 500, retriable: tableVanished },
  );
  return rows[0]?.partition_key;
}

/** The table's partition key once the table is there again, waiting up to 10 s for it (undefined: still missing). */
async function tableBack(ch: ClickHouseClient, table: string): Promise<string | undefined> {
  let key = await partitionKey(ch, table);
  for (let i = 0; key === undefined && i < 200; i++) {
    await sleep(50);
    key = await partitionKey(ch, table);
  }
  return key;
}

/**
 * Upgrade of a database made before partitioning: a table's partition key cannot be altered, and copying it would
 * rewrite the whole table while the roles write to it. So the old table is renamed `<table>_unpartitioned` and a
 * partitioned one takes its name in the same RENAME (writers, old releases included, go on writing `<table>`); reads
 * see both (`readTable`) and the sweep drops the old table whole once every crawl in it has expired.
 * `create(table, as)` makes the partitioned table under another name, with every column the old one has (writers must
 * not find a column missing after the RENAME). Roles migrating at once: the
 * RENAME of the second fails (the target exists) and it finds the table partitioned. The two renames are not atomic on
 * 18.16: a statement between them finds no table (code 60, retried as STORE_UNAVAILABLE by the client).
 */
export async function partitionOldTables(ch: ClickHouseClient, create: (table: string, as: string) => Promise<void>, tables: string[]): Promise<void> {
  for (const table of tables) {
    if ((await partitionKey(ch, table)) !== "") continue;
    const fresh = `${table}_partitioned`;
    try {
      await create(table, fresh);
      await ch.exec(raw(`RENAME TABLE ${ch.table(table)} TO ${ch.table(`${table}${LEGACY_SUFFIX}`)}, ${ch.table(fresh)} TO ${ch.table(table)}`));
    } catch (err) {
      // another role's RENAME may be between its two steps (seconds on a loaded server): wait for the table to be back
      const key = await tableBack(ch, table);
      if (key === "") throw err;
      // a RENAME that stopped half-way for good (the server stopped): finish it, unless the other role did; its second
      // step can still be running on a loaded server (CI: the table was missing for over 5 s, then this RENAME found
      // no `fresh` because the other role had just taken it), so it gets as long again before this one gives up
      if (key === undefined) {
        await ch.exec(raw(`RENAME TABLE ${ch.table(fresh)} TO ${ch.table(table)}`)).catch(async (late: unknown) => {
          if ((await tableBack(ch, table)) === undefined) throw late;
        });
      } else await dropTable(ch, fresh);
    }
  }
}

export interface DropResult {
  /** `table/day` of every partition dropped, and `table_unpartitioned` for a dropped predecessor */
  dropped: string[];
}

/** Subqueries of crawl ids: `live` (not marked expired), `stored` (with a row in `crawls`). */
export interface Pins {
  live: SqlFragment;
  stored: SqlFragment;
}

/**
 * Drops the days of every retained table that are past retention and hold no pinned row, and a predecessor table once
 * it holds none and its newest row is past retention. Cost: the list of parts, plus the pinned crawls' rows in old
 * days (read through the primary key); nothing is rewritten.
 */
export async function dropExpiredDays(ch: ClickHouseClient, now: number, retentionMs: number, pins: Pins, legacy: Set<string>): Promise<DropResult> {
  const dropped: string[] = [];
  const horizon = now - retentionMs;
  for (const { table, time, pin, job = "crawl_id" } of RETAINED) {
    const by = pin === "none" ? undefined : pins[pin];
    const eligible = await pastDays(ch, table, horizon);
    if (eligible.length > 0) {
      const end = (Math.max(...eligible) + 1) * DAY_MS;
      const pinned = by
        ? new Set((await ch.query<{ d: unknown }>(
          sql`SELECT DISTINCT intDiv(${raw(time)}, ${DAY_MS}) AS d FROM ${raw(ch.table(table))} WHERE ${raw(time)} < ${end} AND ${raw(job)} IN (${by})`,
        )).map((r) => Number(r.d)))
        : new Set<number>();
      for (const day of eligible.filter((d) => !pinned.has(d))) {
        await ch.exec(sql`ALTER TABLE ${raw(ch.table(table))} DROP PARTITION ${day}`);
        dropped.push(`${table}/${day}`);
      }
    }
    if (legacy.has(table) && (await legacyExpired(ch, `${table}${LEGACY_SUFFIX}`, time, job, horizon, by))) {
      await dropTable(ch, `${table}${LEGACY_SUFFIX}`);
      legacy.delete(table);
      dropped.push(`${table}${LEGACY_SUFFIX}`);
    }
  }
  return { dropped };
}

async function legacyExpired(ch: ClickHouseClient, name: string, time: string, job: string, horizon: number, by: SqlFragment | undefined): Promise<boolean> {
  const t = raw(ch.table(name));
  if (by && Number((await ch.query<{ n: unknown }>(sql`SELECT count() AS n FROM ${t} WHERE ${raw(job)} IN (${by})`))[0]?.n ?? 0) > 0) return false;
  const columns = await ch.query<{ n: unknown }>(sql`SELECT count() AS n FROM system.columns WHERE database = ${ch.database} AND table = ${name} AND name = ${time}`);
  // frontier_urls had no time column: its rows are a crawl's, pinned above
  if (Number(columns[0]?.n ?? 0) === 0) return true;
  const last = await ch.query<{ last: unknown }>(sql`SELECT max(${raw(time)}) AS last FROM ${t}`);
  return Number(last[0]?.last ?? 0) < horizon;
}
