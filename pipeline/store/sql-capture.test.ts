import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join as joinPath } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { captureStatements, capturing, columnsOf, publishStatement } from "./sql-capture.ts";
import { join, list, raw, sql } from "./sql.ts";

describe("SQL shapes and examples (the capture's statement text)", () => {
  it("shows each value as its kind, and an example with strings as 'x' and numbers as sent", () => {
    const secret = "hash-of-a-key";
    const q = sql`SELECT a FROM ${raw("db.t")} WHERE k = ${secret} AND n >= ${42} AND b = ${true} AND z = ${null} LIMIT ${10}`;
    expect(q.text).toBe("SELECT a FROM db.t WHERE k = 'hash-of-a-key' AND n >= 42 AND b = 1 AND z = NULL LIMIT 10");
    expect(q.shape).toBe("SELECT a FROM db.t WHERE k = {String} AND n >= {Number} AND b = {Bool} AND z = NULL LIMIT {Number}");
    expect(q.example).toBe("SELECT a FROM db.t WHERE k = 'x' AND n >= 42 AND b = 1 AND z = NULL LIMIT 10");
    expect(q.example).not.toContain(secret);
  });
  it("keeps the shapes of nested fragments, and an IN list has one shape whatever its length", () => {
    const inner = sql`x = ${"v"}`;
    const one = sql`SELECT 1 WHERE ${inner} AND id IN (${list(["a"])})`;
    const three = sql`SELECT 1 WHERE ${inner} AND id IN (${list(["a", "b", "c"])})`;
    expect(three.text).toBe("SELECT 1 WHERE x = 'v' AND id IN ('a', 'b', 'c')");
    expect(three.shape).toBe(one.shape);
    expect(three.shape).toBe("SELECT 1 WHERE x = {String} AND id IN ({String})");
    expect(three.example).toBe("SELECT 1 WHERE x = 'x' AND id IN ('x')");
  });
  it("joins fragments with their shapes", () => {
    const terms = ["cat", "dog"].map((t) => sql`(position(doc, ${t}) > 0)`);
    const q = sql`SELECT ${join(terms.map((h, i) => sql`countIf(${h}) AS ${raw(`df${i}`)}`), ", ")} WHERE ${join(terms, " OR ")}`;
    expect(q.text).toBe("SELECT countIf((position(doc, 'cat') > 0)) AS df0, countIf((position(doc, 'dog') > 0)) AS df1 WHERE (position(doc, 'cat') > 0) OR (position(doc, 'dog') > 0)");
    expect(q.shape).toBe("SELECT countIf((position(doc, {String}) > 0)) AS df0, countIf((position(doc, {String}) > 0)) AS df1 WHERE (position(doc, {String}) > 0) OR (position(doc, {String}) > 0)");
  });
});

describe("captureStatements", () => {
  const dir = mkdtempSync(joinPath(tmpdir(), "trawl-sql-capture-"));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is off until subscribed, then appends each distinct statement once", () => {
    expect(capturing()).toBe(false);
    const file = joinPath(dir, "capture.jsonl");
    const stop = captureStatements(file);
    try {
      expect(capturing()).toBe(true);
      const q = { kind: "query" as const, shape: "SELECT {Number} AS n", sql: "SELECT 1 AS n", columns: columnsOf({ n: 1, s: "a", z: null }) };
      publishStatement(q);
      publishStatement({ ...q, sql: "SELECT 2 AS n" });
      publishStatement({ kind: "exec", shape: "DROP TABLE {db}.t", sql: "DROP TABLE {db}.t" });
      const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(lines).toEqual([
        { kind: "query", shape: "SELECT {Number} AS n", sql: "SELECT 1 AS n", columns: { n: "number", s: "string", z: "null" } },
        { kind: "exec", shape: "DROP TABLE {db}.t", sql: "DROP TABLE {db}.t" },
      ]);
    } finally {
      stop();
    }
    expect(capturing()).toBe(false);
  });
});
