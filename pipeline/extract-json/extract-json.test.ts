// The extract-json stage's core: pages.extract -> crawl.pages with json/summary added; a failed extraction still
// hands the page on (stored with metadata.error), never drops it.
import { describe, expect, it } from "vitest";
import type { PageExtract } from "../../schemas/index.ts";
import { parseHtml } from "../convert/parse-html.ts";
import { validator } from "../../schemas/index.ts";
import { createLogger } from "../runtime/logger.ts";
import { PageError } from "../runtime/errors.ts";
import { ExtractJsonProcessor } from "./extract-json.ts";
import type { JsonProvider } from "./provider.ts";
import { rulesProvider } from "./rules.ts";

const log = createLogger("silent", {});
const page = (extract: PageExtract["extract"]): PageExtract => ({
  crawlId: "c1", urlKey: "k1", credits: 1,
  document: { markdown: "Lamps for every room. We sell lamps, shades and bulbs for homes and offices.", metadata: { sourceURL: "http://s.test/", url: "http://s.test/", statusCode: 200, scrapeId: "s1", creditsUsed: 1 } },
  html: `<html><head><title>Lamp shop</title></head><body><dl><dt>Price</dt><dd>12.50 EUR</dd></dl></body></html>`,
  extract,
});
const consumed = (value: PageExtract) => ({ topic: "pages.extract" as const, partition: 0, offset: "0", key: "c1|k1", value });

describe("ExtractJsonProcessor", () => {
  it("adds json and summary, bills a json page 5 credits, emits a valid crawl.pages message keyed by crawl", async () => {
    const p = new ExtractJsonProcessor({ provider: rulesProvider(parseHtml), log, concurrency: 1 });
    const [out] = await p.handle(consumed(page({ json: { schema: { type: "object", properties: { price: { type: "number" }, title: { type: "string" } } } }, summary: true })));
    expect(out).toMatchObject({ topic: "crawl.pages", key: "c1" });
    const value = out?.value as { credits: number; document: Record<string, any> };
    expect(value.credits).toBe(5);
    expect(value.document.json).toEqual({ price: 12.5, title: "Lamp shop" });
    expect(value.document.summary).toBe("Lamps for every room. We sell lamps, shades and bulbs for homes and offices.");
    expect(value.document.metadata.extract).toMatchObject({ provider: "rules", valid: true });
    expect(validator("crawl-page")(JSON.parse(JSON.stringify(value)))).toBe(true);
    const summaryOnly = await p.handle(consumed(page({ summary: true })));
    expect((summaryOnly[0]?.value as { credits: number }).credits).toBe(1);
  });

  it("a provider failure: the page goes on without json, with metadata.error and a warning", async () => {
    const failing: JsonProvider = { name: "llm", json: async () => { throw new PageError("LLM_TIMEOUT", "the model did not answer within 10 ms"); }, summary: async () => ({ summary: "", tokens: 0 }),
      answer: async () => ({ text: "", tokens: 0, warnings: [] }), highlights: async () => ({ text: "", tokens: 0, warnings: [] }) };
    const p = new ExtractJsonProcessor({ provider: failing, log, concurrency: 1 });
    const [out] = await p.handle(consumed(page({ json: {} })));
    const doc = (out?.value as { document: Record<string, any> }).document;
    expect(doc.json).toBeUndefined();
    expect(doc.markdown).toContain("Lamps for every room.");
    expect(doc.metadata.error).toBe("json extraction failed (LLM_TIMEOUT): the model did not answer within 10 ms");
    expect(doc.warning).toContain("LLM_TIMEOUT");
    const [after] = p.onPageFailure(consumed(page({ json: {} })), new TypeError("boom"));
    expect(after).toMatchObject({ topic: "crawl.pages", key: "c1" });
    expect((after?.value as { document: Record<string, any> }).document.metadata.error).toContain("boom");
  });
});
