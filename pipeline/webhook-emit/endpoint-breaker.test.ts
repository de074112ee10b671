import { describe, expect, it } from "vitest";
import { EndpointBreaker, SUSPEND_AFTER } from "./endpoint-breaker.ts";
import { endpointOf } from "./endpoints.ts";

describe("EndpointBreaker", () => {
  it("suspends an endpoint after failures in a row, for the given time; a success forgets them", () => {
    const b = new EndpointBreaker(1000);
    for (let i = 1; i < SUSPEND_AFTER; i++) b.record("http://x", false, 0);
    expect(b.suspendedUntil("http://x", 0)).toBe(0);
    b.record("http://x", false, 10);
    expect(b.suspendedUntil("http://x", 10)).toBe(1010);
    expect(b.suspendedUntil("http://y", 10)).toBe(0);
    expect(b.suspendedUntil("http://x", 1010)).toBe(0);
    // the attempt after the suspension fails: suspended again at once
    b.record("http://x", false, 1020);
    expect(b.suspendedUntil("http://x", 1020)).toBe(2020);
    b.record("http://x", true, 2100);
    expect(b.suspendedUntil("http://x", 2100)).toBe(0);
    b.record("http://x", false, 2200);
    expect(b.suspendedUntil("http://x", 2200)).toBe(0);
  });

  it("a success between failures resets the count", () => {
    const b = new EndpointBreaker(1000);
    for (let i = 0; i < 10; i++) {
      b.record("u", false, i);
      b.record("u", true, i);
    }
    expect(b.suspendedUntil("u", 10)).toBe(0);
  });

  it("the URLs of one endpoint share its count: a new URL of a dead server does not cost its time limits again", () => {
    const b = new EndpointBreaker(1000);
    for (let i = 0; i < SUSPEND_AFTER; i++) b.record(endpointOf(`http://dead.test:8080/hook/crawl-${i}`), false, 0);
    expect(b.suspendedUntil(endpointOf("http://dead.test:8080/hook/crawl-99?x=1"), 0)).toBe(1000);
    expect(b.suspendedUntil(endpointOf("http://DEAD.test:8080/other"), 0)).toBe(1000);
    // another port or scheme is another endpoint
    expect(b.suspendedUntil(endpointOf("http://dead.test:8081/hook"), 0)).toBe(0);
    expect(b.suspendedUntil(endpointOf("https://dead.test:8080/hook"), 0)).toBe(0);
  });
});
