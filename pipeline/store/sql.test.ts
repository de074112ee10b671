import { describe, expect, it } from "vitest";
import { ident, literal, num, raw, sql, str, tuple } from "./sql.ts";

describe("sql escaping", () => {
  it("quotes strings and escapes quotes, backslashes and control characters", () => {
    expect(str("it's")).toBe("'it\\'s'");
    expect(str("back\\slash")).toBe("'back\\\\slash'");
    expect(str("a\0b\nc\rd\te")).toBe("'a\\0b\\nc\\rd\\te'");
    expect(str("\\'")).toBe("'\\\\\\''");
    expect(str("")).toBe("''");
  });
  it("keeps unicode and replaces lone surrogates", () => {
    expect(str("ünï 😀 日本")).toBe("'ünï 😀 日本'");
    expect(str("a\uD800b")).toBe("'a\uFFFDb'");
  });
  it("cannot be broken out of", () => {
    const hostile = "x' OR 1=1 --";
    const out = sql`SELECT * FROM t WHERE a = ${hostile}`.text;
    expect(out).toBe("SELECT * FROM t WHERE a = 'x\\' OR 1=1 --'");
    const tricky = "\\' ; DROP TABLE t; --";
    expect(sql`${tricky}`.text).toBe("'\\\\\\' ; DROP TABLE t; --'");
  });
  it("handles very long strings", () => {
    const long = "'".repeat(100_000);
    const out = str(long);
    expect(out.length).toBe(200_002);
  });
  it("formats numbers, booleans, null and arrays", () => {
    expect(num(42)).toBe("42");
    expect(num(1.5)).toBe("1.5");
    expect(num(2n ** 63n)).toBe("9223372036854775808");
    expect(() => num(NaN)).toThrow(TypeError);
    expect(() => num(Infinity)).toThrow(TypeError);
    expect(literal(true)).toBe("1");
    expect(literal(null)).toBe("NULL");
    expect(literal(["a", 1])).toBe("['a', 1]");
    expect(tuple(["a'b", 2, false])).toBe("('a\\'b', 2, 0)");
    expect(() => literal({})).toThrow(TypeError);
  });
  it("accepts only plain identifiers", () => {
    expect(ident("crawl_id")).toBe("crawl_id");
    for (const bad of ["a-b", "1a", "a b", "a;", "`a`", ""]) expect(() => ident(bad), bad).toThrow(TypeError);
  });
  it("passes raw fragments through unchanged", () => {
    expect(sql`SELECT ${raw("a, b")} FROM t LIMIT ${10}`.text).toBe("SELECT a, b FROM t LIMIT 10");
  });
});
