// ClickHouse connection (the `clickhouse` package over HTTP). SQL text comes from sql.ts only.
import { ClickHouse } from "clickhouse";
import { InfrastructureError, TrawlError } from "../runtime/errors.ts";
import { GroupSender } from "../runtime/group-send.ts";
import type { Logger } from "../runtime/logger.ts";
import { sleep } from "../runtime/retry.ts";
import { clickHouseAgent, refuseCredentialsInUrl, tlsOrAuthFailure } from "./clickhouse-tls.ts";
import { capturing, columnsOf, publishStatement } from "./sql-capture.ts";
import { type SqlFragment, ident, join, sql, tuple } from "./sql.ts";

export interface ClickHouseOptions {
  /** One URL, or several (replicas of one shard) separated by commas: a request whose server is away goes to the next. */
  url: string;
  user: string;
  password: string;
  database: string;
  /** PEM file of the CAs an https:// URL is verified against (CLICKHOUSE_CA_FILE); empty: the system's CAs. */
  caFile?: string;
  /** CLICKHOUSE_CLUSTER: migrations run ON CLUSTER with Replicated engines (cluster-ddl.ts); empty: one server. */
  cluster?: string;
  /** CLICKHOUSE_REQUEST_TIMEOUT_MS: a request whose server sends nothing for this long fails as away (default 60 s). */
  requestTimeoutMs?: number;
  /** Where heals and servers left out are logged. */
  log?: Logger;
}

/** CLICKHOUSE_REQUEST_TIMEOUT_MS' default. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/**
 * Statements (`exec`: DDL, mutations, partition drops) may wait this much longer: an ON CLUSTER statement answers
 * once every replica ran it, up to ClickHouse's distributed_ddl_task_timeout (180 s by default).
 */
const DDL_EXTRA_MS = 180_000;

/** queryEvery: how long the other replicas may take once one has answered (then they count as away). */
const EVERY_GRACE_MS = 3_000;

/** A heal that failed is started again by the next answer that the schema is missing, no sooner than this. */
const HEAL_AGAIN_MS = 5_000;

/** Rows of the INSERTs into one table made while one is in flight go out together, up to this much SQL text. */
const GROUP_INSERT_BYTES = 8 * 1024 * 1024;

const RETRIABLE_NET = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ESOCKETTIMEDOUT|EPIPE|EHOSTUNREACH|socket hang up|ENOTFOUND|EAI_AGAIN/;
/**
 * A server that answers but cannot serve a replicated table now, while another replica can: TABLE_IS_READ_ONLY (242,
 * its ZooKeeper session is lost), NO_ZOOKEEPER (225), KEEPER_EXCEPTION (999), UNKNOWN_STATUS_OF_INSERT (319).
 */
const REPLICA_AWAY = /\bCode: (242|225|999|319)\b/;
/** UNKNOWN_DATABASE (81), UNKNOWN_TABLE (60): the server answers, but lacks Trawl's database or one of its tables. */
const SCHEMA_MISSING = /\bCode: (81|60)\b/;

/**
 * A server that lacks Trawl's database or a table (a replica replaced with an empty disk, a database dropped by hand,
 * a table between the two steps of a rename): retried like a server that is away, never a bug to dead-letter; the
 * client heals the server (replica-heal.ts) and sends nothing to it until it is whole again.
 */
export class SchemaMissingError extends InfrastructureError {
  readonly server: string;
  readonly clickhouseCode: number;
  constructor(message: string, server: string, clickhouseCode: number, cause: unknown) {
    super("STORE_UNAVAILABLE", message, cause);
    this.name = "SchemaMissingError";
    this.server = server;
    this.clickhouseCode = clickhouseCode;
  }
}

/** Server answers that waiting cures, by code, as `REPLICA_AWAY` (read from the `clickhouse` package's error's `code`: it
 * keeps only the text after "Code: N," in the message), and TOO_MANY_PARTS (252, merges catch up),
 * TOO_MANY_SIMULTANEOUS_QUERIES (202), SOCKET_TIMEOUT (209) and NETWORK_ERROR (210) between servers. */
const AWAY_CODES = new Set([242, 225, 999, 319, 252, 202, 209, 210]);
const BUSY = /\bCode: (252|202|209|210)\b/;

/**
 * What a failed request says: `schema-missing` (81 UNKNOWN_DATABASE, 60 UNKNOWN_TABLE: retried, the server healed),
 * `away` (the server is unreachable or cannot serve now: retried, on the next replica first), or `refused` (the
 * statement or its data: another replica would refuse it too; a bug, dead-lettered).
 */
export function failureKind(err: unknown): { kind: "schema-missing"; code: number } | { kind: "away" | "refused" } {
  const message = err instanceof Error ? err.message : String(err);
  const raw = (err as { code?: unknown })?.code;
  const code = Number(raw);
  const missing = code === 81 || code === 60 ? code : Number(SCHEMA_MISSING.exec(message)?.[1] ?? 0);
  if (missing) return { kind: "schema-missing", code: missing };
  if (RETRIABLE_NET.test(message) || REPLICA_AWAY.test(message) || BUSY.test(message) || AWAY_CODES.has(code) || String(raw ?? "").startsWith("E")) return { kind: "away" };
  return { kind: "refused" };
}

/** What the client knows of one server of CLICKHOUSE_URL (for /health and /metrics). */
export type ServerState = "up" | "away" | "missing-schema" | "catching-up";

/** One server of CLICKHOUSE_URL: queries travel in a POST form field, INSERTs with the statement in the URL. */
interface Endpoint {
  url: string;
  ch: InstanceType<typeof ClickHouse>;
  chInsert: InstanceType<typeof ClickHouse>;
  /** Statements whose answer is not read: not parsed (an ON CLUSTER statement answers a TSV table of hosts). */
  chExec: InstanceType<typeof ClickHouse>;
  /** Left out of every request while its schema is missing or it is catching up after a heal (unless all are). */
  state: ServerState;
  /** The heal under way, if any. */
  healing?: Promise<void>;
}

/** Applies Trawl's migrations to one server that lacks its database or a table (replica-heal.ts). */
export type Healer = (url: string, why: SchemaMissingError) => Promise<void>;

/** The URLs of CLICKHOUSE_URL (comma-separated), without trailing slashes. */
export function clickHouseUrls(url: string): string[] {
  return url.split(",").map((u) => u.trim().replace(/\/+$/, "")).filter(Boolean);
}

/** Failed because its server is away (down, unreachable, cut off from ZooKeeper): another replica may serve it. */
export function serverAway(err: unknown): boolean {
  return err instanceof InfrastructureError && err.code === "STORE_UNAVAILABLE";
}

export class ClickHouseClient {
  readonly database: string;
  /** CLICKHOUSE_CLUSTER, or "" for one server. */
  readonly cluster: string;
  /**
   * The servers of CLICKHOUSE_URL. Every request goes to the current one; one that fails because its server is away is
   * sent, as it is, to the next, and so on once round the list. The client stays on the server that answered (it does
   * not go back to the first when that one returns: a replica that has just restarted is still fetching what it missed).
   */
  private readonly endpoints: Endpoint[];
  private current = 0;
  /**
   * One group sender per table and column list. Every INSERT makes a part on the server (files per column, merged
   * later), so the server's CPU follows the number of INSERTs far more than their rows: the stages of a process
   * that write one table at once share one INSERT (the crawl's status counters, URL states, documents).
   */
  private readonly inserts = new Map<string, GroupSender<string>>();
  private readonly caFile: string;
  /** Requests sent again to another server because theirs was away (for tests and logs). */
  readonly failovers = { count: 0 };
  private readonly opts: ClickHouseOptions;
  private healer: Healer | undefined;
  private readonly single = new Map<string, ClickHouseClient>();

  constructor(opts: ClickHouseOptions) {
    const urls = clickHouseUrls(opts.url);
    if (urls.length === 0) throw new TypeError("CLICKHOUSE_URL names no server");
    this.database = ident(opts.database);
    this.cluster = opts.cluster ?? "";
    this.caFile = opts.caFile ?? "";
    this.opts = opts;
    this.endpoints = urls.map((url) => this.endpoint(url, opts));
  }

  private endpoint(url: string, opts: ClickHouseOptions): Endpoint {
    refuseCredentialsInUrl(url);
    const u = new URL(url);
    // the one HTTP(S) agent of both clients below (the package's `request` takes it as is)
    const agent = clickHouseAgent(url, this.caFile);
    // `request`'s timeout: the connection, then any silence of the socket. Without it a server that takes the
    // connection and never answers (packets dropped, a frozen VM) held every caller forever; now the request fails as
    // away (ESOCKETTIMEDOUT / ETIMEDOUT) and goes to the next replica
    const timeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const base = {
      // the path too: a ClickHouse behind a proxy under a path prefix (https://gateway/clickhouse) is reached there
      url: `${u.protocol}//${u.hostname}${u.pathname === "/" ? "" : u.pathname}`,
      port: Number(u.port || (u.protocol === "https:" ? 443 : 80)),
      basicAuth: opts.user ? { username: opts.user, password: opts.password } : null,
      format: "json",
      isSessionPerQuery: false,
      config: { output_format_json_quote_64bit_integers: 0 },
      reqParams: { timeout, ...(agent ? { agent } : {}) },
    };
    // Queries travel in a POST form field (long literals do not fit in a URL); INSERTs: statement in the URL, rows in
    // the body (the package cannot combine a form field with a body).
    return {
      url,
      ch: new ClickHouse({ ...base, usePost: true }),
      chInsert: new ClickHouse({ ...base, usePost: false }),
      chExec: new ClickHouse({ ...base, usePost: true, raw: true, reqParams: { ...base.reqParams, timeout: timeout + DDL_EXTRA_MS } }),
      state: "up",
    };
  }

  /** The server requests go to now (scheme, host and port). */
  get currentUrl(): string {
    return (this.endpoints[this.current] as Endpoint).url;
  }

  /**
   * `request` on the current server; when it fails because the server is away (serverAway), the same request on the
   * next one, once round the list, and the one that answers becomes current. A refusal (bad SQL or data, TLS,
   * credentials) is thrown at once: another replica would refuse it too.
   */
  private async onServers<T>(what: string, request: (e: Endpoint) => Promise<T>): Promise<T> {
    const start = this.current;
    let last: Error | undefined;
    // a server being healed is skipped, unless every server is (then each is tried as usual)
    const order = this.endpoints.map((_, i) => (start + i) % this.endpoints.length);
    const whole = order.filter((at) => !this.leftOut(at));
    const tried = whole.length > 0 ? whole : order;
    for (const [i, at] of tried.entries()) {
      const e = this.endpoints[at] as Endpoint;
      try {
        const out = await request(e);
        if (at !== this.current) this.current = at;
        if (e.state === "away") e.state = "up";
        return out;
      } catch (err) {
        last = this.failed(e, this.wrap(err, what, e.url));
        if (!serverAway(last)) throw last;
        if (i + 1 < tried.length) this.failovers.count++;
      }
    }
    throw last as Error;
  }

  /** Is the server at `at` left out of requests (its schema is missing, or it is catching up after a heal)? */
  private leftOut(at: number): boolean {
    const s = (this.endpoints[at] as Endpoint).state;
    return s === "missing-schema" || s === "catching-up";
  }

  /** Notes what a failure says of its server (away, or lacking the schema: healed) and returns it. */
  private failed(e: Endpoint, err: Error): Error {
    if (err instanceof SchemaMissingError) this.schemaMissing(e, err);
    else if (serverAway(err) && e.state === "up") e.state = "away";
    return err;
  }

  /** `e` lacks Trawl's database or a table: left out of requests and healed (once at a time). */
  private schemaMissing(e: Endpoint, err: SchemaMissingError): void {
    // one server without a cluster: a table missing for a moment is a rename of clickhouse-retention.ts between its two
    // steps (retried as it was); a missing database is created again
    if (e.healing || (!this.cluster && err.clickhouseCode === 60)) return;
    e.state = "missing-schema";
    const healer = this.healer;
    if (!healer) return;
    e.healing = (async () => {
      try {
        await healer(e.url, err);
        e.state = "up";
      } catch (failure) {
        this.opts.log?.warn({ replica: e.url, err: failure instanceof Error ? failure.message : String(failure) }, "clickhouse: healing the server failed; tried again on its next answer");
        // the next failure of the same kind starts another heal, no sooner than a few seconds
        await sleep(HEAL_AGAIN_MS);
      } finally {
        e.healing = undefined;
      }
    })();
  }

  /**
   * The function that applies the migrations to a server lacking the schema (replica-heal.ts sets it: this module does
   * not know the migrations). Without one, such a server is only left out.
   */
  setHealer(healer: Healer): void {
    this.healer = healer;
  }

  /** Marks a server as catching up (healed, still fetching from the other replicas: no request yet) or whole again. */
  setCatchingUp(url: string, catchingUp: boolean): void {
    const e = this.endpoints.find((x) => x.url === url);
    if (e) e.state = catchingUp ? "catching-up" : "up";
  }

  /** A check found the server's schema whole (replica-heal.ts): is it left out with no heal under way (its heal here
   * failed while another process healed it)? `serve`: then it serves again (a request's success resets only `away`). */
  schemaWhole(url: string, serve: boolean): boolean {
    const at = this.endpoints.findIndex((x) => x.url === url);
    if (at < 0 || this.endpoints[at]?.healing || !this.leftOut(at)) return false;
    if (serve) (this.endpoints[at] as Endpoint).state = "up";
    return true;
  }

  /** A server found lacking the schema by a check of its own (replica-heal.ts): healed as if a request had failed. */
  reportSchemaMissing(url: string, err: SchemaMissingError): Promise<void> {
    const e = this.endpoints.find((x) => x.url === url);
    if (!e) return Promise.resolve();
    this.schemaMissing(e, err);
    return e.healing ?? Promise.resolve();
  }

  /** Each server of CLICKHOUSE_URL and what the client knows of it. */
  servers(): { url: string; state: ServerState }[] {
    return this.endpoints.map((e) => ({ url: e.url, state: e.state }));
  }

  /**
   * A client of one server of this one's (same database, cluster and credentials), for checks and heals of that
   * server; one per server (its HTTPS agent keeps its connections).
   */
  forServer(url: string): ClickHouseClient {
    let one = this.single.get(url);
    if (!one) this.single.set(url, (one = new ClickHouseClient({ ...this.opts, url })));
    return one;
  }

  /** `db.table` for a table of Trawl's database. */
  table(name: string): string {
    return `${this.database}.${ident(name)}`;
  }

  private wrap(err: unknown, what: string, url: string): Error {
    const refused = tlsOrAuthFailure(err, url, this.caFile, what);
    if (refused) return refused;
    const message = err instanceof Error ? err.message : String(err);
    const kind = failureKind(err);
    if (kind.kind === "schema-missing") return new SchemaMissingError(`clickhouse ${what} failed on ${url} (its schema is missing): ${message}`, url, kind.code, err);
    if (kind.kind === "away") return new InfrastructureError("STORE_UNAVAILABLE", `clickhouse ${what} failed: ${message}`, err);
    return new TrawlError("BUG", `clickhouse ${what} failed: ${message}`, { cause: err });
  }

  async query<T = Record<string, unknown>>(q: SqlFragment): Promise<T[]> {
    const rows = await this.onServers("query", async (e) => (await e.ch.query(q.text).toPromise()) as T[]);
    if (capturing()) this.capture("query", q.shape, q.example, columnsOf(rows[0] as Record<string, unknown> | undefined));
    return rows;
  }

  /**
   * `q` on every server of CLICKHOUSE_URL at once, the rows of each that answers (one that is away is left out; none
   * answering throws): for a read that must see what any live replica holds, not only what the current one has fetched
   * so far (replication is asynchronous).
   */
  async queryEvery<T = Record<string, unknown>>(q: SqlFragment): Promise<T[][]> {
    // a server being healed is left out (it would answer with the rows it has fetched so far), unless every one is
    const whole = this.endpoints.filter((_, i) => !this.leftOut(i));
    const asking = whole.length > 0 ? whole : this.endpoints;
    const answers: (PromiseSettledResult<T[]> | undefined)[] = asking.map(() => undefined);
    const asked = asking.map(async (e, i) => {
      try {
        answers[i] = { status: "fulfilled", value: (await e.ch.query(q.text).toPromise()) as T[] };
      } catch (err) {
        answers[i] = { status: "rejected", reason: this.failed(e, this.wrap(err, "query", e.url)) };
      }
    });
    const all = Promise.all(asked);
    // once one replica has answered, the others get EVERY_GRACE_MS more: one that hangs (a host that drops packets
    // rather than refusing) counts as away instead of holding every caller for the TCP time-out
    const oneAnswered = Promise.any(asked.map(async (p, i) => {
      await p;
      if (answers[i]?.status !== "fulfilled") throw new Error("no answer");
    }));
    await Promise.race([all, oneAnswered.then(() => sleep(EVERY_GRACE_MS), () => all)]);
    const refused = answers.find((a) => a?.status === "rejected" && !serverAway(a.reason));
    if (refused?.status === "rejected") throw refused.reason;
    const rows = answers.flatMap((a) => (a?.status === "fulfilled" ? [a.value] : []));
    if (rows.length === 0) throw (answers.find((a) => a?.status === "rejected") as PromiseRejectedResult).reason;
    // in the SQL capture as any query (the current-engine check runs what the sink's key list sends too)
    if (capturing()) this.capture("query", q.shape, q.example, columnsOf(rows.flat()[0] as Record<string, unknown> | undefined));
    return rows;
  }

  async exec(q: SqlFragment): Promise<void> {
    await this.onServers("statement", (e) => e.chExec.query(q.text).toPromise());
    if (capturing()) this.capture("exec", q.shape, q.example);
  }

  /**
   * Publishes a statement that succeeded to the SQL capture (sql-capture.ts), with Trawl's database as `{db}`. Not
   * the statements of a client of `system` or `default` (the tests' own housekeeping).
   */
  private capture(kind: "query" | "exec" | "insert", shape: string, example: string, columns?: ReturnType<typeof columnsOf>): void {
    if (this.database === "system" || this.database === "default") return;
    const db = new RegExp(`\\b${this.database}\\b`, "g");
    publishStatement({ kind, shape: shape.replace(db, "{db}"), sql: example.replace(db, "{db}"), ...(columns ? { columns } : {}) });
  }

  /**
   * INSERT … VALUES of many rows, atomic on the server for blocks below max_insert_block_size: the rows of one call
   * are stored together or not at all. Calls for the same table made while an INSERT into it is in flight travel
   * together in the next one (a group the server refused is tried again call by call, so one bad row fails only its
   * own caller).
   */
  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (rows.length === 0) return;
    const statement = `INSERT INTO ${this.table(table)} (${columns.map(ident).join(", ")}) VALUES`;
    let sender = this.inserts.get(statement);
    if (!sender) {
      // a group the server refused is sent again call by call; one that failed because the server is away is not
      const refused = (err: unknown) => !(err instanceof InfrastructureError);
      sender = new GroupSender<string>((bodies) => this.insertText(statement, table, bodies.join(",\n")), (b) => b.length, GROUP_INSERT_BYTES, 0, refused);
      this.inserts.set(statement, sender);
    }
    await sender.submit([rows.map(tuple).join(",\n")]);
    if (capturing()) {
      const row = join((rows[0] as unknown[]).map((v) => sql`${v}`), ", ");
      this.capture("insert", `${statement} (${row.shape})`, `${statement} (${row.example})`);
    }
  }

  /**
   * One INSERT; when its server is away, the same text goes to the next replica. Byte-identical rows make an identical
   * block, which a Replicated table stores once (the block's hash is kept in ZooKeeper, insert_deduplicate): an INSERT
   * the lost server had stored before its answer was lost is not stored twice.
   */
  private async insertText(statement: string, table: string, body: string): Promise<void> {
    await this.onServers(`insert into ${table}`, (e) => e.chInsert.insert(statement, [body]).toPromise());
  }
}
