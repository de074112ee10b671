import { describe, expect, it } from "vitest";
import { HttpError } from "./errors.ts";
import { crawlOptions, pagination } from "./routes/crawl.ts";
import { checkStartUrl } from "./start-url.ts";
import { UNRECOGNIZED_KEYS, validateBody } from "./validate.ts";

const fails = (fn: () => unknown): HttpError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof HttpError) return err;
    throw err;
  }
  throw new Error("did not throw");
};

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

describe("start URL", () => {
  it("adds a scheme and accepts public hosts", () => {
    expect(checkStartUrl("example.com/docs", false)).toBe("http://example.com/docs");
    expect(checkStartUrl(" https://example.com ", false)).toBe("https://example.com");
  });
  it("refuses private targets unless allowed", () => {
    for (const u of ["http://127.0.0.1:8080/", "http://localhost/", "http://10.1.2.3/", "http://[::1]/", "http://192.168.1.1/"]) {
      expect(fails(() => checkStartUrl(u, false)).body.error, u).toMatch(/ALLOW_PRIVATE_CRAWL_TARGETS/);
      expect(checkStartUrl(u, true)).toBe(u);
    }
  });
  it("rejects other protocols and hosts without a TLD", () => {
    expect(fails(() => checkStartUrl("ftp://example.com", true)).body.error).toBe("URL uses unsupported protocol");
    expect(fails(() => checkStartUrl("http://intranet/", false)).body.error).toBe("URL must have a valid top-level domain or be a valid path");
    expect(fails(() => checkStartUrl("http://", false)).body.error).toBe("Invalid URL");
  });
});

describe("crawl options", () => {
  it("applies defaults", () => {
    expect(crawlOptions({ url: "https://x.test" }, 10000)).toEqual({ limit: 10000, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true });
  });
  it("normalises formats given as strings or objects, once each", () => {
    expect(crawlOptions({ url: "u", scrapeOptions: { formats: ["html", { type: "markdown" }, "html"] } }, 1).formats).toEqual(["html", "markdown"]);
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
