// A ClickHouse server that lacks Trawl's database or a table is healed: Trawl applies its migrations to that server
// alone. A replica of a cluster replaced with an empty disk (or whose database was dropped) gets its Replicated tables
// again with the same definitions and ZooKeeper paths, and fetches every part from the other replicas; until it has
// caught up, the client sends it nothing (clickhouse.ts). One server without a cluster gets its database and tables
// again (its rows are gone with its disk).
//
// In 18.16 a replica whose name is still registered in ZooKeeper cannot be CREATEd again ("Replica … already exists",
// 253): it is ATTACHed with the same definition, which queues a fetch of every part ZooKeeper lists for it. A CREATE
// must also name the columns the others got by ALTER (122, "Table structure in ZooKeeper is too different").
import type { Logger } from "../runtime/logger.ts";
import { sleep } from "../runtime/retry.ts";
import { SchemaMissingError, type ClickHouseClient } from "./clickhouse.ts";
import { createdTable, replicaStatement } from "./cluster-ddl.ts";
import { ADDED_COLUMNS, migrate, migrations } from "./migrations.ts";
import { raw, sql } from "./sql.ts";

/** How often each server is checked (reachable, its schema whole, its replication delay). */
export const WATCH_EVERY_MS = 5_000;
/** A healed replica is left out until its replication queue is empty, checked this often, for at most … */
const CATCH_UP_POLL_MS = 500;
/** … this long (then it serves again whatever it has fetched: a replica that never catches up is an operator's matter). */
const CATCH_UP_MAX_MS = 10 * 60_000;
/** A replica whose absolute_delay is below this has updated its queue at least once (replicates). */
const ACTIVE_DELAY_S = 24 * 3600;
/**
 * One server without a cluster found lacking a table on this many checks in a row (30 s) gets its migrations again.
 * Not at once: between the two steps of clickhouse-retention.ts's RENAME a table is missing for a moment (seconds on a
 * loaded server), and the client leaves such a table's statements to be retried (clickhouse.ts).
 */
export const LACKING_CHECKS = 6;

/** One server of CLICKHOUSE_URL as /health and /metrics show it. */
export interface ReplicaStatus {
  url: string;
  /** up; away (unreachable); missing-schema (lacks the database or a table: being healed); catching-up (healed, fetching). */
  state: string;
  /** The largest replication delay of Trawl's tables on it (system.replicas absolute_delay), seconds; cluster only. */
  delayS?: number;
}

/** The tables of Trawl's database `db`. */
const tablesOf = (db: string) => migrations(db).map(createdTable).flatMap((t) => (t ? [t.table] : []));

/** Trawl's tables that the server of `one` lacks (every one when its database is missing). */
export async function missingTables(one: ClickHouseClient): Promise<string[]> {
  const expected = tablesOf(one.database);
  const rows = await one.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${one.database}`);
  const have = new Set(rows.map((r) => r.name));
  return expected.filter((t) => !have.has(t));
}

/** Runs `statement` on `one`; false when ClickHouse refused it with `code`. */
async function refusedWith(one: ClickHouseClient, statement: string, code: number): Promise<boolean> {
  try {
    await one.exec(raw(statement));
    return false;
  } catch (err) {
    if (new RegExp(`\\bCode: ${code}\\b`).test(err instanceof Error ? err.message : String(err))) return true;
    throw err;
  }
}

/** One replicated table created again on the replica of `one`: CREATE, or ATTACH when ZooKeeper still knows the replica. */
async function createReplicaTable(one: ClickHouseClient, statement: string): Promise<void> {
  const table = createdTable(statement)?.table ?? "";
  const added = ADDED_COLUMNS.filter((c) => c.table === table).map((c) => `${c.column} ${c.type}`);
  // with the columns the other replicas got by ALTER first; without them for a cluster whose tables predate them
  for (const columns of added.length > 0 ? [added, []] : [[]]) {
    const create = replicaStatement(statement, one.cluster, columns);
    try {
      if (await refusedWith(one, create, 253)) await one.exec(raw(create.replace(/^\s*CREATE TABLE IF NOT EXISTS/, "ATTACH TABLE")));
      return;
    } catch (err) {
      // another process healed the same table at the same moment
      if (!(await missingTables(one)).includes(table)) return;
      if (columns.length > 0 && /\bCode: 122\b/.test(err instanceof Error ? err.message : String(err))) continue;
      throw err;
    }
  }
}

/**
 * Waits until the replica of `one` has fetched every part of Trawl's tables that the replication log names (or
 * CATCH_UP_MAX_MS): once each table replicates (an ATTACHed replica takes its place only when the lost server's
 * ZooKeeper session has expired; until then its absolute_delay is the time since 1970, its queue never updated),
 * `SYSTEM SYNC REPLICA` pulls the log into the table's queue and waits for the queue to empty. (Before, system.replicas
 * said "queue 0, not read-only" and SYNC REPLICA returned at once: the replica served without the parts.)
 */
async function caughtUp(one: ClickHouseClient): Promise<boolean> {
  const until = Date.now() + CATCH_UP_MAX_MS;
  while (Date.now() < until) {
    const tables = await one.query<{ table: string; ready: number }>(sql`SELECT table,
      is_readonly = 0 AND is_session_expired = 0 AND absolute_delay < ${ACTIVE_DELAY_S} AS ready FROM system.replicas WHERE database = ${one.database}`).catch(() => []);
    if (tables.length > 0 && tables.every((t) => Number(t.ready) === 1)) {
      try {
        for (const t of tables) await one.exec(raw(`SYSTEM SYNC REPLICA ${one.table(t.table)}`));
        return true;
      } catch {
        // not yet (a table still taking its place): again below
      }
    }
    await sleep(CATCH_UP_POLL_MS);
  }
  return false;
}

/** Applies Trawl's migrations to the server `url` of `client`, which lacks its database or a table; logged. */
export async function healServer(client: ClickHouseClient, url: string, log: Logger, why: string): Promise<void> {
  const one = client.forServer(url);
  const missing = await missingTables(one);
  if (missing.length === 0) return;
  log.warn({ replica: url, missing, why }, "clickhouse: a server lacks Trawl's database or tables: applying the migrations to it (no statement goes to it until then)");
  if (!one.cluster) {
    await migrate(one);
    log.warn({ replica: url }, "clickhouse: the server's database and tables were created again");
    return;
  }
  await one.exec(raw(`CREATE DATABASE IF NOT EXISTS ${one.database}`));
  for (const statement of migrations(one.database)) {
    const t = createdTable(statement);
    if (t && missing.includes(t.table)) await createReplicaTable(one, statement);
  }
  await migrate(one); // columns added since (ALTERs replicate), and nothing else left to create
  client.setCatchingUp(url, true);
  log.warn({ replica: url, tables: missing.length }, "clickhouse: the replica's tables were created again; it fetches their parts from the other replicas (left out until it has)");
  const done = await caughtUp(one);
  log.warn({ replica: url, caughtUp: done }, done ? "clickhouse: the healed replica has caught up and serves again" : "clickhouse: the healed replica has not caught up in 10 minutes; it serves again anyway");
}

/**
 * Heals every server of `client` that lacks the schema, now and every WATCH_EVERY_MS, and keeps what each check found
 * for /health and /metrics. Requests that meet a missing schema heal too (clickhouse.ts); this finds a replica no
 * request reaches (the client stays on the server that answers).
 */
export class ReplicaWatch {
  private readonly statuses = new Map<string, ReplicaStatus>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  /** Servers found whole while left out with no heal under way, being let back in (serveAgain). */
  private readonly rejoining = new Set<string>();
  /** Without a cluster: the checks in a row that found each server lacking a table. */
  private readonly lackingChecks = new Map<string, number>();

  private readonly client: ClickHouseClient;
  private readonly log: Logger;

  constructor(client: ClickHouseClient, log: Logger) {
    this.client = client;
    this.log = log;
    client.setHealer((url, err) => healServer(client, url, log, err.message));
  }

  /**
   * One check of every server. A server lacking the schema while another has it whole is marked at once (requests
   * leave it out from here on: the migrations at start read a whole one) and healed (not awaited). When none has it
   * whole (a new database), the migrations create it. A server found whole that is still left out with no heal under
   * way (its heal here failed while another process, or a later try, made it whole) serves again.
   */
  check(): Promise<void> {
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async checkAll(): Promise<void> {
    const found = await Promise.all(this.client.servers().map((s) => this.checkOne(s.url)));
    for (const [i, s] of this.client.servers().entries()) if (found[i]?.length === 0) this.serveAgain(s.url);
    if (!this.client.cluster) for (const [i, s] of this.client.servers().entries()) this.lackingTables(s.url, found[i]);
    if (!found.some((f) => f?.length === 0)) return;
    for (const [i, s] of this.client.servers().entries()) {
      const missing = found[i];
      if (!missing?.length) continue;
      // 81 (UNKNOWN_DATABASE) when it has none of them, as a request would have been told
      const code = missing.length === tablesOf(this.client.database).length ? 81 : 60;
      void this.client.reportSchemaMissing(s.url, new SchemaMissingError(`the server lacks ${missing.join(", ")}`, s.url, code, undefined));
    }
  }

  /**
   * `url` has the whole schema: left out here with no heal under way (this process's heal failed, e.g. an ON CLUSTER
   * statement timed out, while another process healed it), it serves again; a replica once it has caught up.
   */
  private serveAgain(url: string): void {
    if (this.rejoining.has(url) || !this.client.schemaWhole(url, false)) return;
    this.rejoining.add(url);
    const one = this.client.forServer(url);
    void (one.cluster ? caughtUp(one) : Promise.resolve(true))
      .then((done) => this.client.schemaWhole(url, true) && this.log.warn({ replica: url, caughtUp: done }, "clickhouse: a server left out as lacking the schema has it whole (healed, not by this process's heal): it serves again"))
      .finally(() => this.rejoining.delete(url));
  }

  /**
   * A server without a cluster lacking a table (dropped by hand: every statement touching it was retried for ever)
   * on LACKING_CHECKS checks in a row: Trawl's migrations applied again (CREATE … IF NOT EXISTS; the table is empty).
   */
  private lackingTables(url: string, missing: string[] | undefined): void {
    const checks = missing?.length ? (this.lackingChecks.get(url) ?? 0) + 1 : 0;
    this.lackingChecks.set(url, checks < LACKING_CHECKS ? checks : 0);
    if (checks < LACKING_CHECKS) return;
    void healServer(this.client, url, this.log, `lacking ${missing?.join(", ")} on ${LACKING_CHECKS} checks in a row`)
      .catch((err: unknown) => this.log.warn({ replica: url, err: err instanceof Error ? err.message : String(err) }, "clickhouse: healing the server failed; tried again after as many checks"));
  }

  /** The tables the server lacks (undefined: away), its status noted. */
  private async checkOne(url: string): Promise<string[] | undefined> {
    const one = this.client.forServer(url);
    try {
      const missing = await missingTables(one);
      const status: ReplicaStatus = { url, state: missing.length > 0 ? "missing-schema" : "up" };
      if (one.cluster && missing.length === 0) {
        const [r] = await one.query<{ delay: number }>(sql`SELECT max(absolute_delay) AS delay FROM system.replicas WHERE database = ${one.database}`);
        status.delayS = Number(r?.delay ?? 0);
      }
      this.statuses.set(url, status);
      return missing;
    } catch {
      this.statuses.set(url, { url, state: "away" });
      return undefined;
    }
  }

  /** Checks every WATCH_EVERY_MS until stop(). */
  start(): this {
    this.timer = setInterval(() => void this.check(), WATCH_EVERY_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Each server: the client's own view while it heals one, else what the last check found. */
  replicas(): ReplicaStatus[] {
    return this.client.servers().map((s) => {
      const seen = this.statuses.get(s.url);
      if (s.state === "missing-schema" || s.state === "catching-up") return { ...seen, url: s.url, state: s.state };
      return seen ?? { url: s.url, state: s.state };
    });
  }
}
