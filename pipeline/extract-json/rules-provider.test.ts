// The rules provider on real pages (PostgreSQL manual, Python docs, copied into test/fixtures/extract) and fixture
// pages with JSON-LD and microdata. Every expected value below was written by hand from the page.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseHtml } from "../convert/parse-html.ts";
import { gatherEvidence } from "./evidence.ts";
import type { JsonSchema } from "./json-schema.ts";
import { extractWithRules } from "./rules-provider.ts";
import { compileUserSchema } from "./user-schema.ts";

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/extract/${name}`, import.meta.url), "utf8");
const run = (page: string, schema: JsonSchema) => {
  const out = extractWithRules(gatherEvidence(parseHtml(fixture(page))), schema);
  const validate = compileUserSchema(schema);
  expect(validate(out.data), JSON.stringify(validate.errors)).toBe(true);
  return out;
};

describe("rules provider: PostgreSQL numeric types table", () => {
  const schema: JsonSchema = {
    type: "object",
    properties: {
      title: { type: "string" },
      types: { type: "array", items: { type: "object", required: ["name"], properties: { name: { type: "string" }, storage_size: { type: "string" }, range: { type: "string" } } } },
    },
  };

  it("reads one object per row, header -> property, with the cell of every value", () => {
    const { data, sources } = run("pg-datatype-numeric.html", schema);
    const decimalRange = "up to 131072 digits before the decimal point; up to 16383 digits after the decimal point";
    expect(data).toEqual({
      title: "8.1. Numeric Types",
      types: [
        { name: "smallint", storage_size: "2 bytes", range: "-32768 to +32767" },
        { name: "integer", storage_size: "4 bytes", range: "-2147483648 to +2147483647" },
        { name: "bigint", storage_size: "8 bytes", range: "-9223372036854775808 to +9223372036854775807" },
        { name: "decimal", storage_size: "variable", range: decimalRange },
        { name: "numeric", storage_size: "variable", range: decimalRange },
        { name: "real", storage_size: "4 bytes", range: "6 decimal digits precision" },
        { name: "double precision", storage_size: "8 bytes", range: "15 decimal digits precision" },
        { name: "smallserial", storage_size: "2 bytes", range: "1 to 32767" },
        { name: "serial", storage_size: "4 bytes", range: "1 to 2147483647" },
        { name: "bigserial", storage_size: "8 bytes", range: "1 to 9223372036854775807" },
      ],
    });
    expect(sources["/types/1/storage_size"]).toEqual({
      kind: "table", text: "4 bytes", cell: { table: 1, row: 1, column: "Storage Size" },
      path: "div#DATATYPE-NUMERIC-TABLE > div > table > tbody > tr:nth-of-type(2) > td:nth-of-type(2)",
    });
  });

  it("matches a property by its description and reads numbers out of cells", () => {
    const { data } = run("pg-datatype-numeric.html", {
      type: "object",
      properties: { numericTypes: { type: "array", items: { type: "object", properties: { type: { type: "string", description: "name" }, bytes: { type: "integer", description: "storage size" } } } } },
    });
    // "variable" is not a number: absent, not invented
    expect((data as { numericTypes: unknown[] }).numericTypes).toEqual([
      { type: "smallint", bytes: 2 }, { type: "integer", bytes: 4 }, { type: "bigint", bytes: 8 }, { type: "decimal" }, { type: "numeric" },
      { type: "real", bytes: 4 }, { type: "double precision", bytes: 8 }, { type: "smallserial", bytes: 2 }, { type: "serial", bytes: 4 }, { type: "bigserial", bytes: 8 },
    ]);
  });
});

describe("rules provider: Python json module docs", () => {
  it("reads functions from the definition lists whose class names them", () => {
    const { data, sources } = run("python-json.html", {
      type: "object",
      properties: { title: { type: "string" }, functions: { type: "array", items: { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } } } },
    });
    expect(data).toEqual({
      title: "json — JSON encoder and decoder",
      functions: [
        { name: "json.dump", description: "Serialize obj as a JSON formatted stream to fp (a .write()-supporting file-like object) using this conversion table." },
        { name: "json.dumps", description: "Serialize obj to a JSON formatted str using this conversion table. The arguments have the same meaning as in dump()." },
        { name: "json.load", description: "Deserialize fp (a .read()-supporting text file or binary file containing a JSON document) to a Python object using this conversion table." },
        { name: "json.loads", description: "Deserialize s (a str, bytes or bytearray instance containing a JSON document) to a Python object using this conversion table." },
      ],
    });
    expect(sources["/functions/0/name"]).toMatchObject({ kind: "dl", path: "section#basic-usage > dl:nth-of-type(1) > dt" });
    expect(sources["/title"]).toMatchObject({ kind: "heading", path: "section#module-json > h1" });
  });
});

describe("rules provider: JSON-LD, meta, key-value tables, definition lists, label lines", () => {
  const product: JsonSchema = {
    type: "object",
    required: ["name", "price", "color", "gtin"],
    properties: {
      name: { type: "string" }, brand: { type: "string" }, sku: { type: "string" }, price: { type: "number" }, currency: { type: "string" },
      inStock: { type: "boolean", description: "availability" }, rating: { type: "number" }, reviewCount: { type: "integer" },
      weight: { type: "string" }, warranty: { type: "string" }, madeIn: { type: "string" }, shipping: { type: "string" },
      color: { type: "string" }, gtin: { type: ["string", "null"] }, image: { type: "string" },
      reviews: { type: "array", items: { type: "object", properties: { author: { type: "string" }, rating: { type: "integer" }, text: { type: "string", description: "review body" } } } },
    },
  };

  it("a product page: every field from where the page states it; no evidence -> null when required", () => {
    const { data, sources } = extractWithRules(gatherEvidence(parseHtml(fixture("product-jsonld.html"))), product);
    expect(data).toEqual({
      name: "Trail Runner 3", brand: "Acme", sku: "TR3-42", price: 129.9, currency: "EUR", inStock: true, rating: 4.6, reviewCount: 212,
      weight: "280 g", warranty: "2 years", madeIn: "Portugal", shipping: "free over 50 €", color: "Black, Red, Blue", gtin: null,
      image: "https://shop.example/img/tr3.jpg",
      reviews: [{ author: "Ana", rating: 5, text: "Great grip on wet rock." }, { author: "Ben", rating: 4, text: "Runs a bit small." }],
    });
    expect(sources["/price"]).toEqual({ kind: "json-ld", path: "jsonld[0].offers.price", text: "129.90" });
    expect(sources["/weight"]).toMatchObject({ kind: "table", text: "280 g", cell: { table: 0, row: 0, column: "Weight" } });
    expect(sources["/warranty"]).toMatchObject({ kind: "dl", text: "2 years" });
    expect(sources["/shipping"]).toMatchObject({ kind: "label", text: "Shipping: free over 50 €" });
    expect(sources["/image"]).toMatchObject({ kind: "meta", path: 'meta[property="og:image"]' });
    expect(sources["/gtin"]).toBeUndefined();
  });

  it("an article: @graph, synonyms (headline, date published), keywords as a list, a heading's section", () => {
    const { data, sources } = run("article-jsonld.html", {
      type: "object",
      properties: {
        title: { type: "string" }, author: { type: "string" }, publishedAt: { type: "string", description: "date published" },
        updated: { type: "string" }, wordCount: { type: "integer" }, tags: { type: "array", items: { type: "string" } },
        siteName: { type: "string" }, readingTime: { type: "string" }, comments: { type: "integer" },
      },
    });
    expect(data).toEqual({
      title: "Why we moved to Kafka", author: "Dana Smith", publishedAt: "2025-03-04T09:00:00Z", updated: "2025-03-10T12:00:00Z",
      wordCount: 1830, tags: ["kafka", "streaming", "architecture"], siteName: "Example Engineering Blog", readingTime: "About 8 minutes.",
    });
    expect(sources["/publishedAt"]).toMatchObject({ kind: "json-ld", path: 'jsonld[0]["@graph"][1].datePublished' });
    expect(sources["/tags/2"]).toMatchObject({ kind: "json-ld", text: "architecture" });
  });

  it("repeated microdata items become an array of objects", () => {
    const { data, sources } = run("microdata-events.html", {
      type: "object",
      properties: {
        events: { type: "array", items: { type: "object", properties: { name: { type: "string" }, startDate: { type: "string" }, location: { type: "string" } } } },
        contact: { type: "string" }, openingHours: { type: "string" },
      },
    });
    expect(data).toEqual({
      events: [
        { name: "Poetry night", startDate: "2026-01-15T19:00", location: "Main hall" },
        { name: "Chess club", startDate: "2026-01-17T14:00", location: "Room 2" },
      ],
      contact: "events@library.example",
      openingHours: "Mon–Sat 9:00–18:00",
    });
    expect(sources["/events/1/name"]).toMatchObject({ kind: "microdata", path: "html > body > div:nth-of-type(2) [itemprop=name]" });
  });

  it("a page that states none of the fields gives an empty object, never invented values", () => {
    const { data, sources } = extractWithRules(gatherEvidence(parseHtml("<html><body><p>Hello there, nothing to see.</p></body></html>")), {
      type: "object", required: ["price"], properties: { price: { type: ["number", "null"] }, ceo: { type: "string" } },
    });
    expect(data).toEqual({ price: null });
    expect(sources).toEqual({});
  });
});

describe("rules provider: known limits (what it misses, asserted so that a change is noticed)", () => {
  it("Python docs: classes, exceptions and methods by their list class; keyword prefixes dropped", () => {
    const { data } = run("python-json.html", {
      type: "object",
      properties: {
        classes: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
        exceptions: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
      },
    });
    expect(data).toEqual({ classes: [{ name: "json.JSONDecoder" }, { name: "json.JSONEncoder" }], exceptions: [{ name: "json.JSONDecodeError" }] });
  });

  it("misses: a value with no label, a list nested in JSON-LD objects, a column named only in other words, a fact in prose", () => {
    const product = run("product-jsonld.html", {
      type: "object",
      properties: { drop: { type: "string" }, colours: { type: "array", items: { type: "string" } }, reviewers: { type: "array", items: { type: "string" } }, priceText: { type: "string", description: "displayed price" } },
    });
    // reviewers (review[].author.name) and the unlabelled "129.90 €" are missed
    expect(product.data).toEqual({ drop: "6 mm", colours: ["Black", "Red", "Blue"] });
    const pg = run("pg-datatype-numeric.html", {
      type: "object",
      properties: { maxPrecision: { type: "integer" }, types: { type: "array", items: { type: "object", properties: { name: { type: "string" }, bytes: { type: "integer" } } } } },
    });
    // "bytes" without a description does not name the "Storage Size" column, and a table must state at least two of
    // the item's properties: no types at all; the 1000 of a note's prose is missed too
    expect(pg.data).toEqual({});
  });
});
