// json and summary formats end to end in both modes: POST /v2/scrape and crawls through the official JS SDK, the
// extract-json stage between convert and sink (only for pages that ask for it), the rules provider (no LLM here).
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtractSite, type ExtractSite } from "../fixtures/extract-site.ts";
import { MODES, postJson, startTrawl, type Instance } from "./harness.ts";

const productSchema = {
  type: "object",
  required: ["name", "price"],
  properties: { name: { type: "string" }, price: { type: "number" }, currency: { type: "string" }, brand: { type: "string" } },
};
const typesSchema = {
  type: "object",
  properties: { types: { type: "array", items: { type: "object", properties: { name: { type: "string" }, storage_size: { type: "string" }, range: { type: "string" } } } } },
};

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ExtractSite;
  let fc: Firecrawl;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startExtractSite(), startTrawl({ mode })]);
    fc = new Firecrawl({ apiKey: "", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("SDK scrape with formats [{type:'json', schema}] and summary: typed json, provenance, an extractive summary", async () => {
    const doc = await fc.scrape(`${site.origin}/docs/datatype-numeric.html`, { formats: [{ type: "json", schema: typesSchema }, "summary"] });
    const json = doc.json as { types: { name: string; storage_size: string; range: string }[] };
    expect(json.types).toHaveLength(10);
    expect(json.types[0]).toEqual({ name: "smallint", storage_size: "2 bytes", range: "-32768 to +32767" });
    expect(doc.summary).toMatch(/^Numeric types consist of two-, four-, and eight-byte integers/);
    expect(doc.markdown).toBeUndefined();
    const meta = doc.metadata as Record<string, any>;
    expect(meta.extract).toMatchObject({ provider: "rules", valid: true, tokens: 0 });
    expect(meta.extract.sources["/types/0/storage_size"]).toMatchObject({ kind: "table", text: "2 bytes", cell: { column: "Storage Size" } });
    expect(meta.creditsUsed).toBe(5);
  });

  it("an invalid JSON Schema is refused with a 400 that names the problem", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/shop/`, formats: [{ type: "json", schema: { type: "object", properties: { a: { type: "strnig" } } } }] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST" });
    expect(res.body.error).toContain("invalid JSON Schema");
    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/shop/`, scrapeOptions: { formats: [{ type: "json", schema: { required: "x" } }] } });
    expect(crawl.status).toBe(400);
  });

  it("a crawl with a json format: every page goes through extract-json; one without: no page does", async () => {
    const withJson = await fc.crawl(`${site.origin}/shop/`, { limit: 10, scrapeOptions: { formats: ["markdown", { type: "json", schema: productSchema }] }, pollInterval: 1 });
    expect(withJson.status).toBe("completed");
    expect(withJson.data).toHaveLength(4);
    const byUrl = new Map(withJson.data.map((d) => [String(d.metadata?.sourceURL), d]));
    expect(byUrl.get(`${site.origin}/shop/trail-runner`)?.json).toEqual({ name: "Trail Runner 3", price: 129.9, currency: "EUR", brand: "Acme" });
    // the shop index states no price: null where required, never invented
    expect((byUrl.get(`${site.origin}/shop/`)?.json as Record<string, unknown>).price).toBeNull();
    for (const d of withJson.data) {
      expect(d.markdown).toBeTruthy();
      expect((d.metadata as Record<string, any>).extract.provider).toBe("rules");
    }
    const plain = await fc.crawl(`${site.origin}/shop/`, { limit: 10, scrapeOptions: { formats: ["markdown"] }, pollInterval: 1 });
    expect(plain.data).toHaveLength(4);
    for (const d of plain.data) {
      expect(d.json).toBeUndefined();
      expect((d.metadata as Record<string, any>).extract).toBeUndefined();
      expect(d.metadata?.creditsUsed).toBe(1);
    }
  });
});
