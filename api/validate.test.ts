import { describe, expect, it } from "vitest";
import { HttpError } from "./errors.ts";
import { pagination } from "./routes/crawl.ts";
import { UNRECOGNIZED_KEYS, validateBody } from "./validate.ts";
import { errorOf } from "../pipeline/runtime/error-of.testing.ts";

const fails = (fn: () => unknown): HttpError => errorOf(fn, HttpError);

describe("request validation", () => {
  it("reports issues in the anchor's shape", () => {
    const err = fails(() => validateBody("crawl-request", { url: 1, limit: "x", extra: true, scrapeOptions: { formats: ["nope"] } }));
    expect(err.status).toBe(400);
    expect(err.body).toMatchObject({ success: false, code: "BAD_REQUEST", error: "Bad Request" });
    const details = err.body.details as { code: string; path: unknown[]; message: string; keys?: string[] }[];
    expect(details[0]).toEqual({ code: "unrecognized_keys", keys: ["extra"], path: [], message: UNRECOGNIZED_KEYS });
    expect(details).toContainEqual(expect.objectContaining({ code: "invalid_type", path: ["url"] }));
    expect(details).toContainEqual(expect.objectContaining({ code: "invalid_type", path: ["limit"] }));
    expect(details.some((d) => d.path.join(".") === "scrapeOptions.formats.0")).toBe(true);
  });
  it("reports a missing field at its path", () => {
    const err = fails(() => validateBody("crawl-request", {}));
    expect(err.body.details).toEqual([{ code: "invalid_type", path: ["url"], message: "Required" }]);
  });
});

describe("pagination", () => {
  it("parses skip and limit strictly", () => {
    expect(pagination({})).toEqual({ skip: 0 });
    expect(pagination({ skip: "20", limit: "5" })).toEqual({ skip: 20, limit: 5 });
    for (const q of [{ skip: "-1" }, { skip: "1.5" }, { skip: "1a" }, { limit: "0" }, { limit: "1001" }, { limit: "-1" }, { skip: ["1", "2"] }]) {
      expect(fails(() => pagination(q)).body.error, JSON.stringify(q)).toMatch(/^Invalid pagination/);
    }
  });
});
