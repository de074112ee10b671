import { describe, expect, it } from "vitest";
import { failureKind } from "./clickhouse.ts";

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
