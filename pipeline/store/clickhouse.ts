// ClickHouse connection (the `clickhouse` package over HTTP). SQL text comes from sql.ts only.
import { ClickHouse } from "clickhouse";
import { InfrastructureError, TrawlError } from "../runtime/errors.ts";
import { type SqlFragment, ident, tuple } from "./sql.ts";

export interface ClickHouseOptions {
  url: string;
  user: string;
  password: string;
  database: string;
}

const RETRIABLE_NET = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|socket hang up|ENOTFOUND|EAI_AGAIN/;

export class ClickHouseClient {
  readonly database: string;
  /** Queries travel in a POST form field (long literals do not fit in a URL). */
  private readonly ch: InstanceType<typeof ClickHouse>;
  /** INSERTs: statement in the URL, rows in the body (the package cannot combine a form field with a body). */
  private readonly chInsert: InstanceType<typeof ClickHouse>;

  constructor(opts: ClickHouseOptions) {
    const u = new URL(opts.url);
    this.database = ident(opts.database);
    const base = {
      url: `${u.protocol}//${u.hostname}`,
      port: Number(u.port || (u.protocol === "https:" ? 443 : 80)),
      basicAuth: opts.user ? { username: opts.user, password: opts.password } : null,
      format: "json",
      isSessionPerQuery: false,
      config: { output_format_json_quote_64bit_integers: 0 },
    };
    this.ch = new ClickHouse({ ...base, usePost: true });
    this.chInsert = new ClickHouse({ ...base, usePost: false });
  }

  /** `db.table` for a table of Trawl's database. */
  table(name: string): string {
    return `${this.database}.${ident(name)}`;
  }

  private wrap(err: unknown, what: string): Error {
    const message = err instanceof Error ? err.message : String(err);
    if (RETRIABLE_NET.test(message) || (err as { code?: string })?.code?.toString().startsWith("E")) {
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

  /** One INSERT … VALUES of many rows: atomic on the server for blocks below max_insert_block_size. */
  async insert(table: string, columns: string[], rows: unknown[][]): Promise<void> {
    if (rows.length === 0) return;
    const body = rows.map(tuple).join(",\n");
    try {
      await this.chInsert.insert(`INSERT INTO ${this.table(table)} (${columns.map(ident).join(", ")}) VALUES`, [body]).toPromise();
    } catch (err) {
      throw this.wrap(err, `insert into ${table}`);
    }
  }
}
