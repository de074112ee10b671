import { describe, expect, it } from "vitest";
import { fitChunk } from "./paging.ts";

describe("fitChunk", () => {
  it("takes documents while the JSON fits, counting separators", () => {
    expect(fitChunk([10, 10, 10], 32, 100)).toBe(3);
    expect(fitChunk([10, 10, 10], 31, 100)).toBe(2);
    expect(fitChunk([10, 10, 10], 21, 100)).toBe(2);
    expect(fitChunk([10, 10, 10], 20, 100)).toBe(1);
  });
  it("always returns a first document, however large", () => {
    expect(fitChunk([500, 1], 100, 100)).toBe(1);
  });
  it("stops at the document count", () => {
    expect(fitChunk([1, 1, 1, 1], 1000, 2)).toBe(2);
    expect(fitChunk([], 1000, 2)).toBe(0);
  });
});
