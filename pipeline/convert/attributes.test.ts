import { parse } from "parse5";
import { describe, expect, it } from "vitest";
import { attributeValues, MAX_ATTRIBUTE_VALUES } from "./attributes.ts";
import { convertPage } from "./document.ts";
import { parseHtml } from "./parse-html.ts";

const PAGE = `<html><head><meta name="a" content="x"></head><body>
<nav><a href="/home" data-id="n1">Home</a></nav>
<main><ul class="products">
  <li data-sku="A1"><a href="/p/a1" title="First">A</a></li>
  <li data-sku="B2"><a href="/p/b2">B</a></li>
  <li><span data-sku="C3">nested</span></li>
</ul><img src="/i.png" alt="Pic"></main>
<footer><a href="/legal" data-id="f1">Legal</a></footer></body></html>`;

describe("attributeValues", () => {
  it("every matching element's value, in document order, per selector; elements without the attribute are skipped", () => {
    for (const doc of [parseHtml(PAGE), parse(PAGE)]) {
      expect(attributeValues(doc, [
        { selector: "ul.products > li", attribute: "data-sku" },
        { selector: "a", attribute: "href" },
        { selector: "a", attribute: "title" },
        { selector: "[data-sku]", attribute: "data-sku" },
        { selector: "img", attribute: "ALT" },
        { selector: "table td", attribute: "id" },
      ])).toEqual([
        { selector: "ul.products > li", attribute: "data-sku", values: ["A1", "B2"] },
        { selector: "a", attribute: "href", values: ["/home", "/p/a1", "/p/b2", "/legal"] },
        { selector: "a", attribute: "title", values: ["First"] },
        { selector: "[data-sku]", attribute: "data-sku", values: ["A1", "B2", "C3"] },
        { selector: "img", attribute: "ALT", values: ["Pic"] },
        { selector: "table td", attribute: "id", values: [] },
      ]);
    }
  });

  it("is bounded per selector and walks deep pages without recursion", () => {
    const many = `<div>${"<i n=1></i>".repeat(MAX_ATTRIBUTE_VALUES + 5)}</div>`;
    expect(attributeValues(parseHtml(many), [{ selector: "i", attribute: "n" }])[0]?.values).toHaveLength(MAX_ATTRIBUTE_VALUES);
    const deep = `${"<div>".repeat(20_000)}<b id="deep"></b>`;
    expect(attributeValues(parseHtml(deep), [{ selector: "div b", attribute: "id" }])[0]?.values).toEqual(["deep"]);
  });

  it("in a document: the page before cleaning (onlyMainContent does not hide nav and footer); absent without the format", () => {
    const page = { url: "http://x/", finalUrl: "http://x/", statusCode: 200, contentType: "text/html", body: PAGE, scrapeId: "s" };
    const attributes = [{ selector: "a[data-id]", attribute: "data-id" }];
    const doc = convertPage(page, { formats: ["markdown", "attributes"], onlyMainContent: true, attributes }).document;
    expect(doc.attributes).toEqual([{ selector: "a[data-id]", attribute: "data-id", values: ["n1", "f1"] }]);
    expect(doc.markdown).not.toContain("Legal");
    expect(convertPage(page, { formats: ["markdown"], onlyMainContent: true }).document.attributes).toBeUndefined();
    const json = { ...page, contentType: "application/json", body: "{}" };
    expect(convertPage(json, { formats: ["attributes"], onlyMainContent: true, attributes }).document.attributes).toEqual([{ ...attributes[0], values: [] }]);
  });
});
