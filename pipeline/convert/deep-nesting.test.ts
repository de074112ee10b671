// Deeply nested pages (issue 31, item 8): 20,000 nested <div>s overflowed the stack of the recursive walks (cleaning,
// markdown, the serializer) and the page failed with SCRAPE_UNPARSEABLE, while the browser path, whose parser stops
// nesting at 512, converted it. The tree builder now stops nesting at the same depth: the text comes out, in order.
import { afterAll, describe, expect, it } from "vitest";
import type { DefaultTreeAdapterMap } from "parse5";
import { convertPage } from "./document.ts";
import { parseHtml } from "./parse-html.ts";
import { INLINE_ROOM, MAX_TREE_DEPTH } from "./tree-builder.ts";
import { ConvertPool } from "./worker-pool.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];

const options = { formats: ["markdown" as const, "html" as const, "links" as const], onlyMainContent: true };
const page = (body: string) => ({ url: "https://s.test/deep", finalUrl: "https://s.test/deep", statusCode: 200, contentType: "text/html", body, scrapeId: "x" });

/** `depth` nested divs with text at the top, at the bound, halfway and at the bottom (and a link there), then a paragraph after them. */
function deepPage(depth: number): string {
  const marks = new Map([[1, "Top text."], [MAX_TREE_DEPTH + 10, "Past the bound."], [Math.floor(depth / 2), "Halfway text."]]);
  let html = "<html><head><title>Deep</title></head><body><main><h1>Deep page</h1>";
  for (let i = 1; i <= depth; i++) html += marks.has(i) ? `<div><p>${marks.get(i)}</p>` : "<div>";
  html += `<p>Deepest text with <a href="/bottom">a link</a>.</p>` + "</div>".repeat(depth) + "<p>After the nesting.</p></main></body></html>";
  return html;
}

const TEXTS = ["Deep page", "Top text.", "Past the bound.", "Halfway text.", "Deepest text with [a link](https://s.test/bottom).", "After the nesting."];

function deepestElement(node: Node): { el: Element; depth: number } {
  let best = { el: node as Element, depth: 0 };
  const stack: { node: Node; depth: number }[] = [{ node, depth: 0 }];
  while (stack.length) {
    const { node: n, depth } = stack.pop() as { node: Node; depth: number };
    if (depth > best.depth) best = { el: n as Element, depth };
    for (const child of (n as Element).childNodes ?? []) if ("tagName" in child) stack.push({ node: child, depth: depth + 1 });
  }
  return best;
}

describe("deeply nested pages", () => {
  for (const depth of [20_000, 100_000]) {
    it(`${depth.toLocaleString("en")} nested divs convert, every text in order`, () => {
      for (const onlyMainContent of [true, false]) {
        const { document, links } = convertPage(page(deepPage(depth)), { ...options, onlyMainContent });
        const md = document.markdown as string;
        const at = TEXTS.map((t) => md.indexOf(t));
        expect(at, md.slice(0, 300)).not.toContain(-1);
        expect([...at].sort((a, b) => a - b)).toEqual(at);
        expect(links).toEqual(["https://s.test/bottom"]);
        for (const t of ["Halfway text.", "Deepest text with", "After the nesting."]) expect(document.html).toContain(t);
      }
    });
  }

  it(`nests blocks at most ${MAX_TREE_DEPTH} deep and phrasing elements ${INLINE_ROOM} more; end tags still close what they opened`, () => {
    const doc = parseHtml(deepPage(20_000));
    // the deepest: the link inside the last paragraph, which is at the bound
    expect(deepestElement(doc)).toMatchObject({ depth: MAX_TREE_DEPTH + 1, el: { tagName: "a" } });
    expect(deepestElement(parseHtml("<span>".repeat(100_000) + "x")).depth).toBe(MAX_TREE_DEPTH + INLINE_ROOM);
    // the paragraph after the 20,000 end tags is back in <main>, after the outermost div
    const html = doc.childNodes.find((n) => n.nodeName === "html") as Element;
    const body = html.childNodes.find((n) => n.nodeName === "body") as Element;
    const mainEl = body.childNodes.find((n) => n.nodeName === "main") as Element;
    expect(mainEl.childNodes.map((n) => n.nodeName)).toEqual(["h1", "div", "p"]);
    // up to the bound, elements nest as written; past it, they become siblings
    const atBound = deepestElement(parseHtml("<div>".repeat(MAX_TREE_DEPTH) + "x"));
    expect(atBound.depth).toBe(MAX_TREE_DEPTH);
    expect(atBound.el.childNodes.map((n) => n.nodeName)).toEqual(["#text"]);
    const past = deepestElement(parseHtml("<div>".repeat(MAX_TREE_DEPTH + 2) + "x"));
    expect(past.depth).toBe(MAX_TREE_DEPTH);
    expect((past.el.parentNode as Element).childNodes.length).toBe(3);
  });

  describe("in the convert pool (the stage's and the scrape's path)", () => {
    const pool = new ConvertPool({ size: 1, timeoutMs: 20_000 });
    afterAll(() => pool.close());
    it("a 100,000-deep page converts in a worker", async () => {
      const { document } = await pool.convert(page(deepPage(100_000)), options);
      for (const t of TEXTS) expect(document.markdown).toContain(t);
    }, 30_000);
  });
});
