// The rules result computed in the convert worker, on the tree convert parsed (before cleaning), is the rules
// provider's own answer on the fixture pages: same data, same sources (CSS paths of the uncleaned page), same warnings.
// And the convert pool loads the analyzer by URL in its workers and returns that result with the converted page.
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { convertPage } from "../convert/document.ts";
import { parseHtml } from "../convert/parse-html.ts";
import { ConvertPool } from "../convert/worker-pool.ts";
import type { JsonSchema } from "./json-schema.ts";
import { analyze } from "./rules-analyzer.ts";
import { precomputedRules, rulesProvider, type RulesResult } from "./rules.ts";

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/extract/${name}`, import.meta.url), "utf8");
const page = (body: string) => ({ url: "https://s.test/a", finalUrl: "https://s.test/a", statusCode: 200, contentType: "text/html; charset=utf-8", body, scrapeId: "x" });
const options = (schema: JsonSchema, formats: ("markdown" | "json")[] = ["markdown", "json"]) => ({ formats, onlyMainContent: true, json: { schema, prompt: "ignored" } });

const cases: [string, JsonSchema][] = [
  ["pg-datatype-numeric.html", { type: "object", properties: { title: { type: "string" }, types: { type: "array", items: { type: "object", properties: { name: { type: "string" }, storage_size: { type: "string" }, range: { type: "string" } } } } } }],
  ["product-jsonld.html", { type: "object", properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" }, sku: { type: "string" } } }],
  ["microdata-events.html", { type: "object", properties: { events: { type: "array", items: { type: "object", properties: { name: { type: "string" }, startDate: { type: "string" } } } }, contact: { type: "string" } } }],
  ["python-json.html", { type: "object", properties: { functions: { type: "array", items: { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } } } } }],
];

describe("rules analyzer (json in the convert worker)", () => {
  it.each(cases)("%s: the same result as the rules provider parsing the page again", async (file, schema) => {
    const html = fixture(file);
    const converted = convertPage(page(html), options(schema), analyze);
    const expected = await rulesProvider(parseHtml).json({ url: "https://s.test/a", html, markdown: "" }, { schema, prompt: "ignored" });
    expect(converted.analysis).toBeDefined();
    const viaAnalysis = await precomputedRules(rulesProvider(parseHtml), converted.analysis as unknown as RulesResult).json({ url: "https://s.test/a", html: "", markdown: "" }, { schema });
    expect(viaAnalysis).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(Object.keys(viaAnalysis.sources).length).toBeGreaterThan(0);
  });

  it("says nothing for a page that does not ask for json", () => {
    expect(convertPage(page(fixture("product-jsonld.html")), options({ type: "object" }, ["markdown"]), analyze).analysis).toBeUndefined();
  });

  describe("in the convert pool", () => {
    const pool = new ConvertPool({ size: 1, timeoutMs: 20_000, analyzer: new URL("./rules-analyzer.ts", import.meta.url).href });
    afterAll(() => pool.close());
    it("each worker loads the analyzer by URL and returns its result with the page", async () => {
      const [file, schema] = cases[1] as [string, JsonSchema];
      const converted = await pool.convert(page(fixture(file)), options(schema));
      expect((converted.analysis as { data: unknown }).data).toEqual({ name: "Trail Runner 3", price: 129.9, currency: "EUR", sku: "TR3-42" });
    }, 30_000);
  });
});
