import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { validator } from "../../schemas/index.ts";
import { bundledSchema, messageText } from "./registry.ts";

describe("bundledSchema", () => {
  it("inlines referenced schema files under $defs and keeps no file reference or $id", () => {
    const s = JSON.stringify(bundledSchema("crawl-page"));
    expect(s).not.toMatch(/\.schema\.json/);
    expect(s).not.toContain('"$id"');
    expect(s).toContain('"$ref":"#/$defs/document"');
  });

  it("accepts and refuses exactly what the schema files accept and refuse", () => {
    const ajv = new Ajv({ strict: false });
    const bundled = ajv.compile(bundledSchema("crawl-page"));
    const files = validator("crawl-page");
    const doc = { markdown: "# a", metadata: { sourceURL: "http://a.test/", url: "http://a.test/", statusCode: 200, scrapeId: "s", creditsUsed: 1 } };
    const samples = [
      { crawlId: "c", urlKey: "k", credits: 1, document: doc },
      { crawlId: "c", urlKey: "k", credits: 1, document: { ...doc, markdown: 5 } },
      { crawlId: "c", urlKey: "k", credits: -1, document: doc },
      { crawlId: "c", urlKey: "k", credits: 1, document: doc, extra: true },
      { crawlId: "c", credits: 1, document: doc },
    ];
    const verdicts = samples.map((x) => [bundled(x), files(x)]);
    expect(verdicts.map(([a]) => a)).toEqual(verdicts.map(([, b]) => b));
    expect(verdicts[0]).toEqual([true, true]);
    expect(verdicts.slice(1).every(([a]) => a === false)).toBe(true);
  });
});

describe("messageText", () => {
  it("drops the Confluent wire-format header and leaves plain JSON as is", () => {
    const header = Buffer.from([0, 0, 0, 0, 7]);
    expect(messageText(Buffer.concat([header, Buffer.from('{"a":1}')]))).toBe('{"a":1}');
    expect(messageText(Buffer.from('{"a":1}'))).toBe('{"a":1}');
    expect(messageText(null)).toBeNull();
  });
});
