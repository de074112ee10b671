// Opt-in capture of the SQL Trawl sends to ClickHouse, for the current-engine check (scripts/chdb.sh): the client
// publishes each statement on a diagnostics channel, which costs nothing while no one subscribes; `captureStatements`
// (subscribed when TRAWL_SQL_CAPTURE names a file: by app/main.ts and by the integration tests' setup) appends each
// distinct statement to the file as one JSON line. No value that may be secret is written: string values are `'x'`,
// the database is `{db}`; numbers are kept (a LIMIT or a partition's day is part of what the engine checks).
import { channel } from "node:diagnostics_channel";
import { appendFileSync } from "node:fs";

const statements = channel("trawl:clickhouse:statement");

/** How a value of a result column reads in JSON (what Trawl's parsing depends on). */
export type ColumnKind = "string" | "number" | "boolean" | "null" | "array" | "object";

export interface CapturedStatement {
  /** query: rows are read (JSON); exec: the answer is not read; insert: INSERT … VALUES with one example row */
  kind: "query" | "exec" | "insert";
  /** the statement with each value as its kind (`{String}`, `{Number}`) and Trawl's database as `{db}` */
  shape: string;
  /** a runnable form: string values `'x'`, numbers as sent, the database `{db}` */
  sql: string;
  /** a query's columns as the server answered them, when it returned a row: name -> JSON kind, in order */
  columns?: Record<string, ColumnKind>;
}

/** True while someone captures (the client builds nothing for the capture otherwise). */
export function capturing(): boolean {
  return statements.hasSubscribers;
}

export function publishStatement(statement: CapturedStatement): void {
  statements.publish(statement);
}

/** The columns of a result row and the JSON kind of each value. */
export function columnsOf(row: Record<string, unknown> | undefined): Record<string, ColumnKind> | undefined {
  if (!row || typeof row !== "object") return undefined;
  const kind = (v: unknown): ColumnKind => (v === null ? "null" : Array.isArray(v) ? "array" : (typeof v as ColumnKind));
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, kind(v)]));
}

/**
 * Appends every distinct statement published from now on to `file` (JSON lines; several processes may append to one
 * file). Returns the function that stops the capture.
 */
export function captureStatements(file: string): () => void {
  const seen = new Set<string>();
  const onStatement = (message: unknown) => {
    const s = message as CapturedStatement;
    const key = `${s.kind}\n${s.shape}\n${JSON.stringify(s.columns ?? null)}`;
    if (seen.has(key)) return;
    seen.add(key);
    appendFileSync(file, `${JSON.stringify(s)}\n`);
  };
  statements.subscribe(onStatement);
  return () => void statements.unsubscribe(onStatement);
}
