import { describe, expect, it } from "vitest";
import { RequestError } from "../runtime/errors.ts";
import { crawlOptions } from "./request-options.ts";

const fails = (fn: () => unknown): RequestError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof RequestError) return err;
    throw err;
  }
  throw new Error("did not throw");
};

describe("crawl options", () => {
  it("applies defaults", () => {
    expect(crawlOptions({ url: "https://x.test" }, 10000)).toEqual({ limit: 10000, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true });
  });
  it("normalises formats given as strings or objects, once each", () => {
    expect(crawlOptions({ url: "u", scrapeOptions: { formats: ["html", { type: "markdown" }, "html"] } }, 1).formats).toEqual(["html", "markdown"]);
  });
});

describe("refusals", () => {
  it("names the field of a refused option", () => {
    const err = fails(() => crawlOptions({ url: "u", scrapeOptions: { formats: [{ type: "json", schema: { type: 7 } }] } }, 1));
    expect(err.issues).toEqual([{ code: "custom", path: ["scrapeOptions", "formats", 0, "schema"], message: err.message }]);
    expect(fails(() => crawlOptions({ url: "u", includePaths: ["(?=x)"] }, 1)).issues[0]?.path).toEqual(["includePaths", 0]);
    expect(fails(() => crawlOptions({ url: "u", scrapeOptions: { includeTags: ["a[["] } }, 1)).issues[0]?.path).toEqual(["scrapeOptions", "includeTags", 0]);
    expect(fails(() => crawlOptions({ url: "u", scrapeOptions: { proxy: "stealth" } }, 1)).message).toMatch(/not available/);
    expect(fails(() => crawlOptions({ url: "u", zeroDataRetention: true }, 1)).issues[0]?.path).toEqual(["zeroDataRetention"]);
    expect(crawlOptions({ url: "u", zeroDataRetention: false }, 1).limit).toBe(1);
  });
  it("maps parsers to the pdf option and delay to milliseconds", () => {
    expect(crawlOptions({ url: "u", scrapeOptions: { parsers: [] } }, 1).pdf).toEqual({ parse: false });
    expect(crawlOptions({ url: "u", scrapeOptions: { parsers: [{ type: "pdf", maxPages: 3 }] } }, 1).pdf).toEqual({ parse: true, maxPages: 3 });
    expect(crawlOptions({ url: "u", delay: 1.5 }, 1).delayMs).toBe(1500);
  });
});
