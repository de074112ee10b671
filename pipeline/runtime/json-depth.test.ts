import { describe, expect, it } from "vitest";
import { jsonDepth, JsonTooDeepError, MAX_JSON_DEPTH, parseJsonText } from "./json-depth.ts";

describe("parseJsonText", () => {
  it("parses up to MAX_JSON_DEPTH levels, refuses one more without parsing, leaves malformed text to JSON.parse", () => {
    const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH))).not.toThrow();
    expect(() => parseJsonText(nested(MAX_JSON_DEPTH + 1))).toThrow(JsonTooDeepError);
    expect(() => parseJsonText("[".repeat(200_000))).toThrow(JsonTooDeepError); // unterminated, but too deep first
    expect(() => parseJsonText('{"a":')).toThrow(SyntaxError);
    expect(parseJsonText('{"a":"[[[[{{{{\\"]]"}')).toEqual({ a: '[[[[{{{{"]]' });
  });
  it("stops scanning once past the bound", () => {
    expect(jsonDepth("[".repeat(1000), 10)).toBe(11);
    expect(jsonDepth("[[]][[[]]]", 10)).toBe(3);
  });
});
