import { describe, expect, it } from "vitest";
import { EndpointBreaker, SUSPEND_AFTER } from "./endpoint-breaker.ts";

describe("EndpointBreaker", () => {
  it("suspends a URL after failures in a row, for the given time; a success forgets them", () => {
    const b = new EndpointBreaker(1000);
    for (let i = 1; i < SUSPEND_AFTER; i++) b.record("http://x/h", false, 0);
    expect(b.suspendedUntil("http://x/h", 0)).toBe(0);
    b.record("http://x/h", false, 10);
    expect(b.suspendedUntil("http://x/h", 10)).toBe(1010);
    expect(b.suspendedUntil("http://x/other", 10)).toBe(0);
    expect(b.suspendedUntil("http://x/h", 1010)).toBe(0);
    // the attempt after the suspension fails: suspended again at once
    b.record("http://x/h", false, 1020);
    expect(b.suspendedUntil("http://x/h", 1020)).toBe(2020);
    b.record("http://x/h", true, 2100);
    expect(b.suspendedUntil("http://x/h", 2100)).toBe(0);
    b.record("http://x/h", false, 2200);
    expect(b.suspendedUntil("http://x/h", 2200)).toBe(0);
  });

  it("a success between failures resets the count", () => {
    const b = new EndpointBreaker(1000);
    for (let i = 0; i < 10; i++) {
      b.record("u", false, i);
      b.record("u", true, i);
    }
    expect(b.suspendedUntil("u", 10)).toBe(0);
  });
});
