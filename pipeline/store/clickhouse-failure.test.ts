import { describe, expect, it, vi } from "vitest";
import { ClickHouseClient, SchemaMissingError, failureKind } from "./clickhouse.ts";

/** An error as the `clickhouse` package makes it from a server's answer: the code apart, the text after "Code: N," as message. */
const answer = (code: number, message: string) => Object.assign(new Error(message), { code });

describe("failureKind", () => {
  it("a missing database or table is retried with a heal, never a bug", () => {
    expect(failureKind(answer(81, "Database trawl doesn't exist, e.what() = DB::Exception"))).toEqual({ kind: "schema-missing", code: 81 });
    expect(failureKind(answer(60, "Table trawl.documents doesn't exist., e.what() = DB::Exception"))).toEqual({ kind: "schema-missing", code: 60 });
    // an ON CLUSTER statement's raw answer keeps the code in its text
    expect(failureKind(new Error("500: Code: 81, e.displayText() = DB::Exception: Database trawl doesn't exist"))).toEqual({ kind: "schema-missing", code: 81 });
  });

  it("a replica that cannot serve now, or a server too busy, is away (by the code the package keeps apart)", () => {
    for (const code of [242, 225, 999, 319, 252, 202, 209, 210]) expect(failureKind(answer(code, "whatever the text")), String(code)).toEqual({ kind: "away" });
    expect(failureKind(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:18123"), { code: "ECONNREFUSED" }))).toEqual({ kind: "away" });
  });

  it("a statement or data the server refuses is a bug", () => {
    expect(failureKind(answer(62, "Syntax error: failed at position 1"))).toEqual({ kind: "refused" });
    expect(failureKind(answer(27, "Cannot parse input"))).toEqual({ kind: "refused" });
  });
});

describe("a server left out as lacking the schema", () => {
  // no request is sent: the healer is the test's, and nothing else reaches the server
  const url = "http://127.0.0.1:1";

  it("serves again once a check finds it whole with no heal under way (its heal failed while another process healed it)", async () => {
    vi.useFakeTimers();
    try {
      const client = new ClickHouseClient({ url, user: "default", password: "", database: "trawl" });
      let fail!: (err: Error) => void;
      client.setHealer(() => new Promise((_, reject) => (fail = reject)));
      const heal = client.reportSchemaMissing(url, new SchemaMissingError("the server lacks documents", url, 81, undefined));
      expect(client.servers()).toEqual([{ url, state: "missing-schema" }]);
      // while this process's heal runs, a check that finds it whole changes nothing
      expect(client.schemaWhole(url, true)).toBe(false);
      expect(client.servers()[0]?.state).toBe("missing-schema");
      fail(new Error("ON CLUSTER statement timed out"));
      await vi.runAllTimersAsync();
      await heal;
      // the heal failed: still left out, until a check finds the schema whole
      expect(client.servers()[0]?.state).toBe("missing-schema");
      expect(client.schemaWhole(url, false)).toBe(true);
      expect(client.servers()[0]?.state).toBe("missing-schema");
      expect(client.schemaWhole(url, true)).toBe(true);
      expect(client.servers()).toEqual([{ url, state: "up" }]);
      // once only: a server that serves is left as it is
      expect(client.schemaWhole(url, true)).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
