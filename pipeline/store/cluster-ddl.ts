// Cluster mode of the store (CLICKHOUSE_CLUSTER): the statements of migrations.ts, written for one server, made into
// their cluster form here, so the table definitions stay in one place. A CREATE runs `ON CLUSTER` (on every replica,
// through the server's distributed DDL queue in ZooKeeper) and a MergeTree-family engine becomes its Replicated twin,
// with the ZooKeeper path built from the database and table and the server's `{shard}` / `{replica}` macros
// (ClickHouse 18.16 syntax: ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/db/table', '{replica}', version)).
import { ConfigError } from "../runtime/config.ts";
import { ident, literal } from "./sql.ts";

const CREATE_DATABASE = /^(\s*CREATE DATABASE IF NOT EXISTS [A-Za-z_][A-Za-z0-9_]*)/;
const CREATE_TABLE = /^(\s*CREATE TABLE IF NOT EXISTS ([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*))/;
/** `ENGINE = MergeTree()`, `ENGINE = ReplacingMergeTree(version)`, … (any MergeTree family member not yet Replicated) */
const ENGINE = /\bENGINE\s*=\s*(?!Replicated)([A-Za-z]*MergeTree)\s*\(([^)]*)\)/;

/** The ZooKeeper path of a replicated table: one per shard, database and table (the replicas of a shard share it). */
export function zooKeeperPath(database: string, table: string): string {
  return `/clickhouse/tables/{shard}/${ident(database)}/${ident(table)}`;
}

/**
 * `statement` (one of migrations.ts) for the cluster `cluster`: CREATE DATABASE / CREATE TABLE get `ON CLUSTER`, the
 * table's engine its Replicated form. Other statements are returned as they are (ALTERs of a replicated table, column
 * additions and DELETE mutations alike, replicate through ZooKeeper by themselves).
 */
export function clusterStatement(statement: string, cluster: string): string {
  const on = ` ON CLUSTER ${literal(cluster)}`;
  const db = CREATE_DATABASE.exec(statement);
  if (db) return statement.replace(CREATE_DATABASE, `$1${on}`);
  const table = CREATE_TABLE.exec(statement);
  if (!table) return statement;
  const [, , database = "", name = ""] = table;
  const engine = ENGINE.exec(statement);
  if (!engine) throw new TypeError(`no MergeTree engine to replicate in: ${statement.slice(0, 80)}`);
  const [, family = "", args = ""] = engine;
  const replicated = [literal(zooKeeperPath(database, name)), literal("{replica}"), ...(args.trim() ? [args.trim()] : [])].join(", ");
  return statement.replace(CREATE_TABLE, `$1${on}`).replace(ENGINE, `ENGINE = Replicated${family}(${replicated})`);
}

/**
 * `statement` (a CREATE of migrations.ts) for one replica of the cluster alone, as its healing runs it (replica-heal.ts):
 * the Replicated engine of `clusterStatement` without `ON CLUSTER`, with `columns` (definitions such as
 * `tokens_used UInt64 DEFAULT 0`) after the statement's own, as the other replicas have them after their ALTERs.
 */
export function replicaStatement(statement: string, cluster: string, columns: string[] = []): string {
  const on = ` ON CLUSTER ${literal(cluster)}`;
  let local = clusterStatement(statement, cluster).replace(on, "");
  if (columns.length > 0) {
    const engine = /\)\s*ENGINE\s*=/.exec(local);
    if (!engine) throw new TypeError(`no column list to extend in: ${statement.slice(0, 80)}`);
    local = `${local.slice(0, engine.index)}, ${columns.join(", ")}${local.slice(engine.index)}`;
  }
  return local;
}

/** The table a CREATE TABLE statement creates (`db`, `table`), or undefined for any other statement. */
export function createdTable(statement: string): { database: string; table: string } | undefined {
  const m = CREATE_TABLE.exec(statement);
  return m ? { database: m[2] ?? "", table: m[3] ?? "" } : undefined;
}

/**
 * A failure of an ON CLUSTER statement that waiting will not cure, as a ConfigError naming what the servers lack (the
 * start stops at once instead of retrying): no such cluster (170), no `{shard}`/`{replica}` macro (62), no
 * `<distributed_ddl>` queue ("DDL background thread is not initialized", 18.16's words). Undefined for any other failure.
 */
export function clusterMisconfigured(err: unknown, cluster: string): ConfigError | undefined {
  const message = err instanceof Error ? err.message : String(err);
  const name = `CLICKHOUSE_CLUSTER=${JSON.stringify(cluster)}`;
  if (/\bCode: 170\b/.test(message)) return new ConfigError(`config: ${name} is not a cluster of the ClickHouse server (a <remote_servers> entry; see SELECT DISTINCT cluster FROM system.clusters)`);
  const macro = /No macro (\w+) in config/.exec(message)?.[1];
  if (macro) return new ConfigError(`config: ${name}: a server of the cluster has no {${macro}} macro (<macros><shard>…</shard><replica>…</replica></macros> in its configuration; the replicated tables' paths need both)`);
  if (/DDL background thread is not initialized/.test(message)) return new ConfigError(`config: ${name}: the ClickHouse server has no <distributed_ddl> queue in its configuration (ON CLUSTER statements need it)`);
  return undefined;
}
