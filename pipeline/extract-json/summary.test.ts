import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { convertPage } from "../convert/document.ts";
import { summarize, SUMMARY_MAX_CHARS } from "./summary.ts";
import { labelKey, labelScore } from "./labels.ts";

const markdownOf = (name: string) => {
  const body = readFileSync(new URL(`../../test/fixtures/extract/${name}`, import.meta.url), "utf8");
  const page = { url: "http://x/", finalUrl: "http://x/", statusCode: 200, contentType: "text/html", body, scrapeId: "s" };
  return convertPage(page, { formats: ["markdown"], onlyMainContent: true }).document.markdown as string;
};

describe("extractive summary", () => {
  it("starts with the lead sentence, copies sentences verbatim, stays within the bound", () => {
    const md = markdownOf("pg-datatype-numeric.html");
    const s = summarize(md);
    expect(s.startsWith("Numeric types consist of two-, four-, and eight-byte integers, four- and eight-byte floating-point numbers, and selectable-precision decimals.")).toBe(true);
    expect(s.length).toBeGreaterThan(200);
    expect(s.length).toBeLessThanOrEqual(SUMMARY_MAX_CHARS);
    const flat = md.replace(/[*_`]/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/\s+/g, " ");
    for (const sentence of s.split(/(?<=\.)\s+(?=[A-Z])/)) expect(flat).toContain(sentence.replace(/…$/, ""));
  });

  it("an article: the lead paragraph; no prose gives an empty summary", () => {
    expect(summarize(markdownOf("article-jsonld.html"))).toBe(
      "Our old queue lost messages under load. We moved every pipeline stage to Kafka in six weeks, and this post explains why the move paid off.",
    );
    expect(summarize("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode here is not prose at all ok\n```")).toBe("");
  });
});

describe("label matching", () => {
  it("ignores case, separators and plurals; knows the documented synonyms; refuses unrelated words", () => {
    expect(labelKey("storageSizes")).toBe("storage size");
    expect(labelScore("storage_size", "Storage Size")).toBe(1);
    expect(labelScore("categories", "Category")).toBe(1);
    expect(labelScore("title", "Headline")).toBeGreaterThan(0.8);
    expect(labelScore("currency", "priceCurrency")).toBeGreaterThan(0.8);
    expect(labelScore("bytes", "Range", "storage size")).toBe(0);
    expect(labelScore("size", "Storage Size")).toBeLessThan(0.9);
    expect(labelScore("price", "Description")).toBe(0);
  });
});
