// Unit tests of the API's security rules: admin key strength and redaction, CORS origins, JSON depth, header checks.
import { describe, expect, it } from "vitest";
import { adminKeyWeakness, checkAdminKey, isLoopbackHost, redactPath } from "./admin-key.ts";
import { jsonDepth } from "../pipeline/runtime/json-depth.ts";
import { parseCorsOrigins } from "./cors.ts";
import { validateBody } from "./validate.ts";
import { HttpError } from "./errors.ts";

const STRONG = "k3J9-xQ2_vL7pZ8wR4tY";

describe("admin key", () => {
  it("is refused when weak off loopback, with a message naming BULL_AUTH_KEY and never the key", () => {
    for (const key of ["CHANGEME", "changeme", "short-key", "aaaaaaaaaaaaaaaaaaaa", "abababababababababab", "has/slash-in-it-12345678"]) {
      expect(adminKeyWeakness(key), key).not.toBeNull();
      let message = "";
      try {
        checkAdminKey("0.0.0.0", key);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, key).toMatch(/^config: BULL_AUTH_KEY is too weak while HOST=0\.0\.0\.0/);
      expect(message).not.toContain(key);
    }
    expect(adminKeyWeakness(STRONG)).toBeNull();
    expect(() => checkAdminKey("0.0.0.0", STRONG)).not.toThrow();
    for (const host of ["127.0.0.1", "127.1.2.3", "::1", "localhost", "::ffff:127.0.0.1"]) expect(() => checkAdminKey(host, "CHANGEME"), host).not.toThrow();
  });
  it("knows loopback hosts (0.0.0.0 and :: are not)", () => {
    for (const h of ["127.0.0.1", "::1", "localhost", "api.localhost", "::ffff:7f00:1"]) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "example.com", "::ffff:10.0.0.1"]) expect(isLoopbackHost(h), h).toBe(false);
  });
  it("is redacted from logged paths", () => {
    expect(redactPath(`/admin/${STRONG}/queues.json`)).toBe("/admin/[redacted]/queues.json");
    expect(redactPath("/v2/crawl/x")).toBe("/v2/crawl/x");
  });
});

describe("CORS_ALLOWED_ORIGINS", () => {
  it("takes *, origins, or nothing; anything else is named", () => {
    expect(parseCorsOrigins("")).toEqual({ any: false, origins: new Set() });
    expect(parseCorsOrigins("*").any).toBe(true);
    expect([...parseCorsOrigins("https://app.example.com, http://localhost:5173/").origins]).toEqual(["https://app.example.com", "http://localhost:5173"]);
    for (const bad of ["app.example.com", "https://app.example.com/path", "file:///x", "javascript:alert(1)"]) {
      expect(() => parseCorsOrigins(bad), bad).toThrow(/CORS_ALLOWED_ORIGINS/);
    }
  });
});

describe("request bodies", () => {
  it("measures JSON nesting, ignoring brackets in strings", () => {
    expect(jsonDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonDepth('"\\"[["')).toBe(0);
    expect(jsonDepth("[".repeat(5000) + "]".repeat(5000))).toBe(5000);
  });
  it("refuses CR, LF or NUL in header names or values, in scrapeOptions and webhook headers", () => {
    const bad = [{ "X-A": "v\r\nX-Injected: 1" }, { "X-A\r\nX-B": "v" }, { "X-A": "v\n" }, { "X A": "v" }, { "X-A": "v\u0000" }];
    for (const headers of bad) {
      for (const [schema, body] of [
        ["crawl-request", { url: "https://example.com", scrapeOptions: { headers } }],
        ["scrape-request", { url: "https://example.com", headers }],
        ["crawl-request", { url: "https://example.com", webhook: { url: "https://hooks.example.com/", headers } }],
      ] as const) {
        expect(() => validateBody(schema, body), `${schema} ${JSON.stringify(body)}`).toThrow(HttpError);
      }
    }
    expect(validateBody("scrape-request", { url: "https://example.com", headers: { "X-Ok": "a: b; c=d" } })).toBeTruthy();
  });
});
