import { parseFragment, type DefaultTreeAdapterMap } from "parse5";
import { describe, expect, it } from "vitest";
import { matches, parseSelector, SelectorError } from "./selector.ts";

type Element = DefaultTreeAdapterMap["element"];

function find(html: string, selector: string): string[] {
  const sel = parseSelector(selector);
  const out: string[] = [];
  const walk = (node: DefaultTreeAdapterMap["parentNode"], ancestors: Element[]) => {
    for (const child of node.childNodes) {
      if (!("tagName" in child)) continue;
      if (matches(child, ancestors, sel)) out.push(child.attrs.find((a) => a.name === "data-n")?.value ?? child.tagName);
      walk(child, [...ancestors, child]);
    }
  };
  walk(parseFragment(html), []);
  return out;
}

const html = `<div class="a b" id="x" data-n="1"><p data-n="2">t</p><section data-n="3"><p class="b" data-n="4">u</p></section></div><p data-n="5" lang="en">v</p>`;

describe("selectors", () => {
  it("match tags, ids, classes and attributes", () => {
    expect(find(html, "p")).toEqual(["2", "4", "5"]);
    expect(find(html, "#x")).toEqual(["1"]);
    expect(find(html, ".a.b")).toEqual(["1"]);
    expect(find(html, "p.b")).toEqual(["4"]);
    expect(find(html, "[lang=en]")).toEqual(["5"]);
    expect(find(html, "[lang]")).toEqual(["5"]);
  });
  it("match descendant and child combinators and lists", () => {
    expect(find(html, "div p")).toEqual(["2", "4"]);
    expect(find(html, "div > p")).toEqual(["2"]);
    expect(find(html, "section > p, #x")).toEqual(["1", "4"]);
  });
  it("rejects what it does not support", () => {
    expect(() => parseSelector("p:first-child")).toThrow(SelectorError);
    expect(() => parseSelector("a ~ b")).toThrow(SelectorError);
    expect(() => parseSelector(" , p")).toThrow(SelectorError);
  });
});
