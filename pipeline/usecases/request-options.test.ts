import { describe, expect, it } from "vitest";
import { batchOptions, checkJobFields, crawlOptions, scrapeSettings, webhookSetting } from "./request-options.ts";
import { requestErrorOf } from "../runtime/error-of.testing.ts";

const fails = requestErrorOf;

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

describe("honest options: refused when they would have no effect", () => {
  it("zeroDataRetention: true is refused, false is fine", () => {
    expect(fails(() => crawlOptions({ url: "u", zeroDataRetention: true }, 1)).issues[0]?.path).toEqual(["zeroDataRetention"]);
    expect(() => checkJobFields({ zeroDataRetention: false })).not.toThrow();
  });
  it("integration: the anchor's list or a custom name starting with _", () => {
    expect(() => checkJobFields({ integration: "langchain" })).not.toThrow();
    expect(() => checkJobFields({ integration: "_mine" })).not.toThrow();
    expect(() => checkJobFields({ integration: null })).not.toThrow();
    expect(fails(() => checkJobFields({ integration: "invalid-integration" })).issues[0]?.path).toEqual(["integration"]);
  });
  it("location and parsers[].mode ocr are refused", () => {
    expect(fails(() => scrapeSettings({ location: { country: "US" } }, [])).issues[0]?.path).toEqual(["location"]);
    expect(fails(() => scrapeSettings({ parsers: [{ type: "pdf", mode: "ocr" }] }, ["scrapeOptions"])).issues[0]?.path).toEqual(["scrapeOptions", "parsers", 0, "mode"]);
    expect(scrapeSettings({ parsers: [{ type: "pdf", mode: "fast" }] }, []).pdf).toEqual({ parse: true });
  });
});

describe("batch options", () => {
  it("a batch: its seeds only, no sitemap, robots.txt as /scrape, page options from the top level", () => {
    expect(batchOptions({ formats: ["html"] }, 3, 2)).toEqual({
      kind: "batch", limit: 3, crawlEntireDomain: false, allowSubdomains: false, formats: ["html"], onlyMainContent: true, sitemap: "skip", ignoreRobotsTxt: true, maxConcurrency: 2,
    });
  });
  it("SELF_HOSTED_WEBHOOK_URL is the webhook of a job that sets none", () => {
    expect(webhookSetting(undefined, "")).toBe("");
    expect(webhookSetting(undefined, "http://hook.test/x")).toBe('"http://hook.test/x"');
    expect(webhookSetting({ url: "http://mine.test" }, "http://hook.test/x")).toBe('{"url":"http://mine.test"}');
  });
});

describe("fastMode", () => {
  it("keeps the page to a static fetch, and refuses options only a browser can honour", () => {
    expect(scrapeSettings({ fastMode: true }, []).fastMode).toBe(true);
    expect(scrapeSettings({ fastMode: false }, []).fastMode).toBeUndefined();
    expect(fails(() => scrapeSettings({ fastMode: true, actions: [{ type: "scrape" }] }, ["scrapeOptions"])).issues[0]?.path).toEqual(["scrapeOptions", "actions"]);
    expect(fails(() => scrapeSettings({ fastMode: true, formats: ["screenshot"] }, [])).message).toMatch(/fastMode .* a screenshot needs one/);
    const branding = fails(() => scrapeSettings({ fastMode: true, formats: [{ type: "branding" }] }, []));
    expect(branding.message).toMatch(/fastMode .* branding needs one: drop fastMode or the branding format/);
    expect(branding.issues[0]?.path).toEqual(["formats"]);
    expect(fails(() => scrapeSettings({ lockdown: true, formats: ["branding"] }, [])).message).toMatch(/branding needs a live browser/);
    expect(fails(() => scrapeSettings({ fastMode: true, waitFor: 500 }, [])).issues[0]?.path).toEqual(["waitFor"]);
    expect(fails(() => scrapeSettings({ fastMode: true, mobile: true }, [])).issues[0]?.path).toEqual(["mobile"]);
    expect(crawlOptions({ url: "u", scrapeOptions: { fastMode: true } }, 1).fastMode).toBe(true);
  });
});
