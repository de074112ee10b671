// ClickHouse connection (the `clickhouse` package over HTTP). SQL text comes from sql.ts only.
import { ClickHouse } from "clickhouse";
import { InfrastructureError, TrawlError } from "../runtime/errors.ts";
import { GroupSender } from "../runtime/group-send.ts";
import { clickHouseAgent, refuseCredentialsInUrl, tlsOrAuthFailure } from "./clickhouse-tls.ts";
import { type SqlFragment, ident, tuple } from "./sql.ts";

export interface ClickHouseOptions {
  url: string;
  user: string;
  password: string;
  database: string;
  /** PEM file of the CAs an https:// URL is verified against (CLICKHOUSE_CA_FILE); empty: the system's CAs. */
  caFile?: string;
}

/** Rows of the INSERTs into one table made while one is in flight go out together, up to this much SQL text. */
const GROUP_INSERT_BYTES = 8 * 1024 * 1024;

const RETRIABLE_NET = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|socket hang up|ENOTFOUND|EAI_AGAIN/;

export class ClickHouseClient {
  readonly database: string;
  /** Queries travel in a POST form field (long literals do not fit in a URL). */
  private readonly ch: InstanceType<typeof ClickHouse>;
  /** INSERTs: statement in the URL, rows in the body (the package cannot combine a form field with a body). */
  private readonly chInsert: InstanceType<typeof ClickHouse>;
  /**
   * One group sender per table and column list. Every INSERT makes a part on the server (files per column, merged
   * later), so the server's CPU follows the number of INSERTs far more than their rows: the stages of a process
   * that write one table at once share one INSERT (the crawl's status counters, URL states, documents).
   */
  private readonly inserts = new Map<string, GroupSender<string>>();
  private readonly url: string;
  private readonly caFile: string;

  constructor(opts: ClickHouseOptions) {
    refuseCredentialsInUrl(opts.url);
    const u = new URL(opts.url);
    this.database = ident(opts.database);
    this.url = opts.url;
    this.caFile = opts.caFile ?? "";
    // the one HTTP(S) agent of both clients below (the package's `request` takes it as is)
    const agent = clickHouseAgent(opts.url, this.caFile);
    const base = {
      url: `${u.protocol}//${u.hostname}`,
      port: Number(u.port || (u.protocol === "https:" ? 443 : 80)),
      basicAuth: opts.user ? { username: opts.user, password: opts.password } : null,
      format: "json",
      isSessionPerQuery: false,
      config: { output_format_json_quote_64bit_integers: 0 },
      ...(agent ? { reqParams: { agent } } : {}),
    };
    this.ch = new ClickHouse({ ...base, usePost: true });
    this.chInsert = new ClickHouse({ ...base, usePost: false });
  }

  /** `db.table` for a table of Trawl's database. */
  table(name: string): string {
    return `${this.database}.${ident(name)}`;
  }

  private wrap(err: unknown, what: string): Error {
    const refused = tlsOrAuthFailure(err, this.url, this.caFile, what);
    if (refused) return refused;
    const message = err instanceof Error ? err.message : String(err);
    // 60 UNKNOWN_TABLE: a migration renaming a table (clickhouse-retention.ts) between its two steps; nothing was written
    if (RETRIABLE_NET.test(message) || (err as { code?: string })?.code?.toString().startsWith("E") || Number((err as { code?: unknown })?.code) === 60) {
      return new InfrastructureError("STORE_UNAVAILABLE", `clickhouse ${what} failed: ${message}`, err);
    }
    return new TrawlError("BUG", `clickhouse ${what} failed: ${message}`, { cause: err });
  }

  async query<T = Record<string, unknown>>(q: SqlFragment): Promise<T[]> {
    try {
      return (await this.ch.query(q.text).toPromise()) as T[];
    } catch (err) {
      throw this.wrap(err, "query");
    }
  }

  async exec(q: SqlFragment): Promise<void> {
    try {
      await this.ch.query(q.text).toPromise();
    } catch (err) {
      throw this.wrap(err, "statement");
    }
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
  }

  private async insertText(statement: string, table: string, body: string): Promise<void> {
    try {
      await this.chInsert.insert(statement, [body]).toPromise();
    } catch (err) {
      throw this.wrap(err, `insert into ${table}`);
    }
  }
}
