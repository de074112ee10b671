import { describe, expect, it } from "vitest";
import { backoffMs, retry } from "./retry.ts";

describe("retry", () => {
  it("backs off exponentially with jitter, capped", () => {
    expect(backoffMs(0, 100, 10_000, () => 0)).toBe(50);
    expect(backoffMs(0, 100, 10_000, () => 1)).toBe(100);
    expect(backoffMs(3, 100, 10_000, () => 1)).toBe(800);
    expect(backoffMs(20, 100, 10_000, () => 1)).toBe(10_000);
  });
  it("retries retriable errors only, up to the limit", async () => {
    let calls = 0;
    const fail = async () => {
      calls++;
      throw new Error("boom");
    };
    await expect(retry(fail, { retries: 2, initialMs: 1, maxMs: 2, retriable: () => true })).rejects.toThrow("boom");
    expect(calls).toBe(3);
    calls = 0;
    await expect(retry(fail, { retries: 5, initialMs: 1, maxMs: 2, retriable: () => false })).rejects.toThrow("boom");
    expect(calls).toBe(1);
    let n = 0;
    expect(await retry(async () => (++n < 3 ? Promise.reject(new Error("x")) : n), { retries: 5, initialMs: 1, maxMs: 2, retriable: () => true })).toBe(3);
  });
});
