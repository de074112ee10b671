import { describe, expect, it } from "vitest";
import type { Context } from "koa";
import { publicBase } from "./public-url.ts";

const ctx = (headers: Record<string, string>, protocol = "http") =>
  ({ protocol, get: (name: string) => headers[name.toLowerCase()] ?? "", request: { socket: { localAddress: "127.0.0.1", localPort: 3002 } } }) as unknown as Context;

describe("publicBase", () => {
  it("uses the request's scheme and Host", () => {
    expect(publicBase(ctx({ host: "api.test:8080" }), false)).toBe("http://api.test:8080");
  });
  it("ignores X-Forwarded-* unless a trusted proxy is configured", () => {
    const c = ctx({ host: "10.0.0.5:3002", "x-forwarded-proto": "https", "x-forwarded-host": "crawl.example.com" });
    expect(publicBase(c, false)).toBe("http://10.0.0.5:3002");
    expect(publicBase(c, true)).toBe("https://crawl.example.com");
  });
  it("takes the first hop of a forwarded list", () => {
    expect(publicBase(ctx({ host: "h", "x-forwarded-proto": "https, http", "x-forwarded-host": "a.test, b.test" }), true)).toBe("https://a.test");
  });
});
