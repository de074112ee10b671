// Idempotent schema migrations, run at start by every role. SQL valid on ClickHouse 18.16 and current releases:
// MergeTree / ReplacingMergeTree(version), UInt64 milliseconds for times, no TTL (retention drops whole days: the
// tables a crawl writes are partitioned by day, see clickhouse-retention.ts).
import type { ClickHouseClient } from "./clickhouse.ts";
import { clusterMisconfigured, clusterStatement, createdTable } from "./cluster-ddl.ts";
import { BY_DAY, RETAINED, legacyTables, partitionBy, partitionOldTables } from "./clickhouse-retention.ts";
import { raw, sql } from "./sql.ts";

/** A column added to a table created by an earlier release (CREATE TABLE IF NOT EXISTS leaves existing tables as they are). */
export interface AddedColumn {
  table: string;
  column: string;
  /** type and default, e.g. `UInt64 DEFAULT 0`: rows written before the column existed read the default */
  type: string;
}

/**
 * Columns added after the first release, in order. `ALTER TABLE … ADD COLUMN IF NOT EXISTS` is not in ClickHouse
 * 18.16, so `migrate` looks the column up in system.columns first.
 */
export const ADDED_COLUMNS: AddedColumn[] = [
  // LLM tokens of a crawl's pages (json / summary with the llm provider), counted by the frontier like credits
  { table: "crawls", column: "tokens_used", type: "UInt64 DEFAULT 0" },
  // LLM tokens of a ledger job (a scrape with a json format, an extract job, an expired crawl)
  { table: "credit_usage", column: "tokens", type: "UInt64 DEFAULT 0" },
  // why each URL was fetched, skipped or failed (url-reason.ts), and the crawl's counts by reason (JSON)
  { table: "frontier_urls", column: "reason", type: "String DEFAULT ''" },
  { table: "frontier_urls", column: "detail", type: "String DEFAULT ''" },
  { table: "frontier_urls", column: "from_url", type: "String DEFAULT ''" },
  { table: "frontier_urls", column: "attempts", type: "UInt32 DEFAULT 0" },
  { table: "crawls", column: "url_reasons", type: "String DEFAULT ''" },
];

/**
 * Rows per index mark of the tables whose rows are whole pages (documents, page cache). Reading one row decompresses
 * its granule from the start up to the row: with ClickHouse's default of 8,192 rows, a status read of one document of
 * a 5,000-page crawl (73 MB) took 133 ms; with 64, 14 ms. Tables created before this setting keep their granularity
 * (ClickHouse cannot change it in place); recreate them to benefit.
 */
export const DOC_GRANULARITY = 64;

export function migrations(db: string): string[] {
  return [
    `CREATE DATABASE IF NOT EXISTS ${db}`,
    // One row per crawl version: the API writes version 0, the frontier writes its snapshots (1, 2, ...).
    `CREATE TABLE IF NOT EXISTS ${db}.crawls (
      crawl_id String, version UInt64, team_id String, url String, options String, webhook String,
      status String, total UInt64, completed UInt64, failed UInt64, credits_used UInt64,
      discovery_done UInt8, created_at UInt64, updated_at UInt64, completed_at UInt64, expires_at UInt64, error String
    ) ENGINE = ReplacingMergeTree(version) ORDER BY crawl_id ${partitionBy("crawls")}`,
    `CREATE TABLE IF NOT EXISTS ${db}.crawl_cancels (crawl_id String, cancelled_at UInt64)
      ENGINE = ReplacingMergeTree(cancelled_at) ORDER BY crawl_id ${partitionBy("crawl_cancels")}`,
    // The frontier's seen-URL state; the latest version of a key wins.
    `CREATE TABLE IF NOT EXISTS ${db}.frontier_urls (
      crawl_id String, url_key String, url String, depth UInt32, state UInt8, version UInt64,
      written_at UInt64 DEFAULT toUInt64(now()) * 1000
    ) ENGINE = ReplacingMergeTree(version) ORDER BY (crawl_id, url_key) ${partitionBy("frontier_urls")}`,
    `CREATE TABLE IF NOT EXISTS ${db}.documents (
      crawl_id String, seq UInt64, url_key String, final_key String, scrape_id String, url String, status_code UInt16,
      bytes UInt32, credits UInt32, stored_at UInt64, doc String
    ) ENGINE = MergeTree() ORDER BY (crawl_id, seq) ${partitionBy("documents")} SETTINGS index_granularity = ${DOC_GRANULARITY}`,
    `CREATE TABLE IF NOT EXISTS ${db}.crawl_errors (
      crawl_id String, url_key String, url String, code String, error String, status_code UInt16, at UInt64
    ) ENGINE = ReplacingMergeTree(at) ORDER BY (crawl_id, url_key) ${partitionBy("crawl_errors")}`,
    // attempt 0: the event was handed to delivery; 1, 2, ...: the outcome of each attempt
    `CREATE TABLE IF NOT EXISTS ${db}.webhook_deliveries (
      crawl_id String, event_id String, event String, url String, status_code UInt16, attempt UInt32, error String, at UInt64
    ) ENGINE = MergeTree() ORDER BY (crawl_id, at) ${partitionBy("webhook_deliveries")}`,
    // x-idempotency-key of POST /v2/crawl and /v2/batch/scrape; the earliest claim of a key wins
    `CREATE TABLE IF NOT EXISTS ${db}.idempotency_keys (team_id String, key String, claim_id String, at UInt64)
      ENGINE = MergeTree() ORDER BY (team_id, key) ${partitionBy("idempotency_keys")}`,
    // crawls the retention sweep found expired (their credits are in the ledger): reads skip them until their days are dropped
    `CREATE TABLE IF NOT EXISTS ${db}.expired_crawls (crawl_id String, at UInt64)
      ENGINE = ReplacingMergeTree(at) ORDER BY crawl_id ${partitionBy("expired_crawls")}`,
    // authentication (USE_DB_AUTHENTICATION=true): teams and their credit balance, API keys stored as scrypt hashes
    `CREATE TABLE IF NOT EXISTS ${db}.teams (team_id String, name String, credits Int64, created_at UInt64, version UInt64)
      ENGINE = ReplacingMergeTree(version) ORDER BY team_id`,
    `CREATE TABLE IF NOT EXISTS ${db}.api_keys (
      key_id String, team_id String, hash String, salt String, rate_per_min UInt32, created_at UInt64, expires_at UInt64,
      revoked_at UInt64, version UInt64
    ) ENGINE = ReplacingMergeTree(version) ORDER BY (key_id, hash)`,
    `CREATE TABLE IF NOT EXISTS ${db}.api_key_uses (key_id String, at UInt64) ENGINE = ReplacingMergeTree(at) ORDER BY key_id`,
    // a team's limit of jobs at once (the latest version wins; no row: TEAM_MAX_CONCURRENCY)
    `CREATE TABLE IF NOT EXISTS ${db}.team_limits (team_id String, concurrency UInt32, version UInt64)
      ENGINE = ReplacingMergeTree(version) ORDER BY team_id`,
    // credits of jobs that are not (or no longer) in the crawls table: scrapes, maps, expired crawls
    `CREATE TABLE IF NOT EXISTS ${db}.credit_usage (team_id String, job_id String, credits UInt64, at UInt64)
      ENGINE = ReplacingMergeTree(at) ORDER BY (team_id, job_id)`,
    // fetched responses for maxAge / storeInCache, by URL + request headers; the newest wins
    `CREATE TABLE IF NOT EXISTS ${db}.page_cache (
      key String, url String, final_url String, status_code UInt16, content_type String, body String, body_base64 String, stored_at UInt64
    ) ENGINE = ReplacingMergeTree(stored_at) ORDER BY key ${partitionBy("page_cache")} SETTINGS index_granularity = ${DOC_GRANULARITY}`,
    // stored screenshots (SCREENSHOTS=url), served at /v2/screenshots/<job>/<id>.<type> while their job is; their days
    // are dropped with the job's (clickhouse-retention.ts)
    `CREATE TABLE IF NOT EXISTS ${db}.screenshots (job_id String, id String, type String, data_base64 String, stored_at UInt64)
      ENGINE = MergeTree() ORDER BY (job_id, id) ${partitionBy("screenshots")}`,
    // change tracking: the last snapshot of each page per team and tag (not a result: no retention with the documents)
    `CREATE TABLE IF NOT EXISTS ${db}.page_snapshots (
      team_id String, tag String, url_key String, url String, crawl_id String, origin String, scraped_at UInt64, status_code UInt16,
      change_status String, content_hash String, etag String, last_modified String, options_hash String, doc String, links String, tracking String
    ) ENGINE = ReplacingMergeTree(scraped_at) ORDER BY (team_id, tag, url_key) SETTINGS index_granularity = ${DOC_GRANULARITY}`,
    // change tracking: one row per job and page (what the job found), kept after the page's snapshot moved on
    `CREATE TABLE IF NOT EXISTS ${db}.page_history (
      team_id String, tag String, url_key String, crawl_id String, url String, origin String, change_status String, status_code UInt16,
      content_hash String, at UInt64
    ) ENGINE = ReplacingMergeTree(at) ORDER BY (team_id, tag, url_key, crawl_id)`,
    // monitors (scheduled recrawls): one row per version of a monitor, and one per check (a run); not results, no retention
    `CREATE TABLE IF NOT EXISTS ${db}.monitors (
      monitor_id String, version UInt64, team_id String, name String, status String, body String, anchor UInt64, created_at UInt64, updated_at UInt64
    ) ENGINE = ReplacingMergeTree(version) ORDER BY monitor_id`,
    `CREATE TABLE IF NOT EXISTS ${db}.monitor_checks (
      monitor_id String, check_id String, team_id String, run_trigger String, scheduled_for UInt64, created_at UInt64, outcome String
    ) ENGINE = ReplacingMergeTree(created_at) ORDER BY (monitor_id, check_id)`,
    // claims of a monitor's next check (clickhouse-monitor-store.ts) and the claims given up (released = 1): a row or
    // two per check and API replica, like monitor_checks; not results, no retention
    `CREATE TABLE IF NOT EXISTS ${db}.monitor_claims (
      monitor_id String, after_check String, check_id String, claim_id String, at UInt64, released UInt8
    ) ENGINE = MergeTree() ORDER BY (monitor_id, after_check, at)`,
  ];
}

async function hasColumn(client: ClickHouseClient, c: AddedColumn): Promise<boolean> {
  const rows = await client.query<{ n: unknown }>(
    sql`SELECT count() AS n FROM system.columns WHERE database = ${client.database} AND table = ${c.table} AND name = ${c.column}`,
  );
  return Number(rows[0]?.n ?? 0) > 0;
}

/**
 * Cluster mode: a table this replica already has is not created again. Every role migrates at start, and an
 * `ON CLUSTER` statement goes through ZooKeeper's DDL queue and waits for every replica of the cluster (up to
 * distributed_ddl_task_timeout while one is down), even when nothing is left to create.
 */
async function exists(client: ClickHouseClient, statement: string): Promise<boolean> {
  const t = createdTable(statement);
  const rows = t ? await client.query(sql`SELECT 1 AS ok FROM system.tables WHERE database = ${t.database} AND name = ${t.table}`)
    : /^\s*CREATE DATABASE /.test(statement) ? await client.query(sql`SELECT 1 AS ok FROM system.databases WHERE name = ${client.database}`)
    : [];
  return rows.length > 0;
}

/** One CREATE statement: as written on one server; in cluster mode ON CLUSTER with Replicated engines, when missing. */
async function create(client: ClickHouseClient, statement: string): Promise<void> {
  if (!client.cluster) await client.exec(raw(statement));
  else if (!(await exists(client, statement))) await client.exec(raw(clusterStatement(statement, client.cluster))).catch((err: unknown) => {
    throw clusterMisconfigured(err, client.cluster) ?? err;
  });
}

/** The CREATE statement of `table` for a table named `as` (the partitioned successor of an old table). */
function createAs(db: string, table: string, as: string): string {
  const head = new RegExp(`^(\\s*CREATE TABLE IF NOT EXISTS ${db}\\.)${table}\\b`);
  const statement = migrations(db).find((s) => head.test(s));
  if (!statement) throw new TypeError(`no CREATE statement for ${table}`);
  return statement.replace(head, `$1${as}`);
}

/**
 * Creates what is missing, adds later columns, and partitions the tables of a database made before partitioning
 * (`partitionOldTables`). Returns the tables whose unpartitioned predecessor is still there (read with them).
 * Cluster mode came after partitioning: a cluster's database has no unpartitioned tables to convert.
 */
export async function migrate(client: ClickHouseClient): Promise<Set<string>> {
  for (const statement of migrations(client.database)) await create(client, statement);
  // the old tables get the later columns first (they are read together with the new ones), then the new ones
  await addColumns(client);
  if (!client.cluster) {
    const createNamed = async (table: string, as: string) => {
      await client.exec(raw(createAs(client.database, table, as)));
      await addColumns(client, (c) => (c.table === table ? { ...c, table: as } : undefined));
    };
    // the page cache before partitioning is not read (a cache: its pages are fetched again); its sweep drops it, not this
    // (dropped here, its name was free again while another role still migrated: that role, which had found the table
    // unpartitioned before this one renamed it, renamed the new table away to the free name and found its own
    // successor gone, and the page cache was missing until a restart)
    await partitionOldTables(client, createNamed, [...RETAINED.map((r) => r.table), ...Object.keys(BY_DAY)]);
    await addColumns(client);
  }
  return legacyTables(client);
}

/** Adds the later columns a table lacks; `which` picks and renames them (default: every one, to its own table). */
async function addColumns(client: ClickHouseClient, which: (c: AddedColumn) => AddedColumn | undefined = (c) => c): Promise<void> {
  for (const c of ADDED_COLUMNS.map(which).filter((x) => x !== undefined)) {
    if (await hasColumn(client, c)) continue;
    try {
      await client.exec(raw(`ALTER TABLE ${client.table(c.table)} ADD COLUMN ${c.column} ${c.type}`));
    } catch (err) {
      // another role added it at the same moment (roles migrate at start, concurrently)
      if (!(await hasColumn(client, c))) throw err;
    }
  }
}
