import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderSchemaTypes } from "../scripts/gen-schema-types.ts";
import { schemas, validator } from "./index.ts";

describe("schemas", () => {
  it("types.ts is generated from the current schemas (run npm run schemas)", async () => {
    expect(readFileSync(join(import.meta.dirname, "types.ts"), "utf8")).toBe(await renderSchemaTypes());
  });
  it("every schema compiles", () => {
    for (const name of Object.keys(schemas)) expect(() => validator(name as never), name).not.toThrow();
  });
  it("accepts what the SDKs send and rejects unknown keys", () => {
    const v = validator("crawl-request");
    expect(v({ url: "https://x.test", origin: "js-sdk@4.42.0", integration: null, ignoreQueryParameters: false, crawlEntireDomain: false, allowExternalLinks: false, allowSubdomains: false, ignoreRobotsTxt: false, regexOnFullURL: false, deduplicateSimilarURLs: true, zeroDataRetention: false, webhook: "https://hook.test/x" })).toBe(true);
    expect(v({ url: "https://x.test", maxDepth: 2 })).toBe(false);
  });
});

describe("scrape-request", () => {
  it("offers every scrape option at the top level (no drift from scrape-options), as the batch scrape does", () => {
    const options = schemas["scrape-options"] as unknown as { properties: Record<string, unknown> };
    for (const name of ["scrape-request", "batch-scrape-request"]) {
      const request = schemas[name] as unknown as { properties: Record<string, unknown> };
      for (const [key, value] of Object.entries(options.properties)) expect(request.properties[key], `${name}: ${key}`).toEqual(value);
    }
  });
});

describe("request headers of a page fetch", () => {
  // found by Schemathesis: such a header reached undici and the scrape answered 500 (UND_ERR_INVALID_ARG)
  it("accept HTTP tokens as names and Latin-1 values; refuse empty or non-token names, CR/LF/NUL and wider characters", () => {
    for (const name of ["scrape-request", "crawl-request"] as const) {
      const v = validator(name);
      const body = (headers: Record<string, string>) => (name === "crawl-request" ? { url: "https://x.test", scrapeOptions: { headers } } : { url: "https://x.test", headers });
      expect(v(body({ "X-Token": "a b\tc é", Cookie: "k=v" })), name).toBe(true);
      for (const bad of [{ "": "x" }, { "a b": "x" }, { "X:Y": "x" }, { "é": "x" }, { X: "a\r\nInjected: 1" }, { X: "nul\u0000" }, { X: "\u0100" }] as Record<string, string>[]) {
        expect(v(body(bad)), `${name} ${JSON.stringify(bad)}`).toBe(false);
      }
    }
  });
});
