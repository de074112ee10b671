// Fidelity fixtures: the expected markdown of each is written by hand.
import { parse, type DefaultTreeAdapterMap } from "parse5";
import { describe, expect, it } from "vitest";
import { MAX_LIST_DEPTH, MAX_QUOTE_DEPTH, renderMarkdown } from "./render-markdown.ts";

function md(html: string): string {
  const doc = parse(`<html><body>${html}</body></html>`);
  const htmlEl = doc.childNodes.find((n) => "tagName" in n && n.tagName === "html") as DefaultTreeAdapterMap["element"];
  const body = htmlEl.childNodes.find((n) => "tagName" in n && n.tagName === "body") as DefaultTreeAdapterMap["element"];
  return renderMarkdown(body);
}

describe("renderMarkdown fidelity", () => {
  it("headings, paragraphs, emphasis, inline code, breaks, rules", () => {
    expect(md("<h1>Title</h1><p>Some <strong>bold</strong>, <em>italic</em>, <del>gone</del> and <code>x = 1</code>.<br>Next line</p><hr><h3>Sub <small>note</small></h3>"))
      .toBe("# Title\n\nSome **bold**, _italic_, ~~gone~~ and `x = 1`.  \nNext line\n\n---\n\n### Sub note");
  });
  it("links with titles and images", () => {
    expect(md('<p>See <a href="https://x.test/a b" title="The A">the docs</a> and <img src="https://x.test/i.png" alt="Logo [v2]"></p>'))
      .toBe('See [the docs](https://x.test/a%20b "The A") and ![Logo v2](https://x.test/i.png)');
  });
  it("fenced code with its language, content verbatim", () => {
    expect(md('<pre><code class="language-python">def f(x):\n    return x * 2  # *not* emphasis\n</code></pre>'))
      .toBe("```python\ndef f(x):\n    return x * 2  # *not* emphasis\n```");
    expect(md('<pre class="lang-sql">SELECT 1;</pre>')).toBe("```sql\nSELECT 1;\n```");
  });
  it("nested lists", () => {
    expect(md("<ol><li>First<ul><li>a</li><li>b<ul><li>deep</li></ul></li></ul></li><li><p>Second</p><p>more</p></li></ol>"))
      .toBe("1. First\n   - a\n   - b\n     - deep\n2. Second\n\n   more");
  });
  it("deep nesting: code, breaks, quotes and tables inside list items keep their place", () => {
    expect(md("<ul><li>a<ul><li>b<ul><li>c<p>para</p><pre>x\ny</pre></li></ul></li></ul></li><li>d</li></ul>"))
      .toBe("- a\n  - b\n    - c\n\n      para\n\n      ```\n      x\n      y\n      ```\n- d");
    expect(md("<ol start=9><li>nine<ol><li>x</li><li>y<br>z</li></ol></li><li>ten<blockquote><p>q1</p><ul><li>in quote<ul><li>deeper</li></ul></li></ul></blockquote></li><li>eleven</li></ol>"))
      .toBe("9. nine\n   1. x\n   2. y  \n      z\n10. ten\n\n    > q1\n    >\n    > - in quote\n    >   - deeper\n11. eleven");
    expect(md("<ul><li>t<table><tr><th>h</th></tr><tr><td><ul><li>cell<ul><li>deep</li></ul></li></ul></td></tr></table></li></ul>"))
      .toBe("- t\n\n  | h |\n  | --- |\n  | - cell   - deep |");
  });
  it("GFM tables, header from the first row, pipes escaped", () => {
    expect(md("<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td>a|b</td><td><code>1</code></td></tr><tr><td>c</td><td>2</td></tr></tbody></table>"))
      .toBe("| Name | Value |\n| --- | --- |\n| a\\|b | `1` |\n| c | 2 |");
  });
  it("nested blockquotes: one `> ` a level up to MAX_QUOTE_DEPTH, then the text inside the deepest (no balloon)", () => {
    expect(md("<blockquote><p>a</p><blockquote><p>b</p><blockquote><p>c</p></blockquote></blockquote></blockquote>"))
      .toBe("> a\n>\n> > b\n> >\n> > > c");
    const nested = (depth: number, inner: string) => "<blockquote>".repeat(depth) + inner + "</blockquote>".repeat(depth);
    const cap = "> ".repeat(MAX_QUOTE_DEPTH);
    expect(md(nested(MAX_QUOTE_DEPTH + 12, "<p>deep</p><p>still</p>"))).toBe(`${cap}deep\n${cap.trimEnd()}\n${cap}still`);
    // 400 levels around 2,000 lines: the markdown stays within the text plus one capped prefix a line (it was 400 a line)
    const lines = Array.from({ length: 2000 }, (_, i) => `<p>line ${i}</p>`).join("");
    const out = md(nested(400, lines));
    expect(out.split("\n").filter((l) => l.includes("line ")).length).toBe(2000);
    expect(out.length).toBeLessThan(2 * 2000 * (cap.length + "line 1999".length + 2));
  });

  it("lists nested deeper than MAX_LIST_DEPTH are not indented further (no balloon)", () => {
    const nested = (depth: number, inner: string) => "<ul><li>".repeat(depth) + inner + "</li></ul>".repeat(depth);
    // an item that holds only a list starts it on its own line ("- - a"); b, under a, is indented by at most 2 a level
    expect(md(nested(MAX_LIST_DEPTH + 20, "<p>a</p><p>b</p>"))).toBe(`${"- ".repeat(MAX_LIST_DEPTH + 20)}a\n\n${"  ".repeat(MAX_LIST_DEPTH)}b`);
    expect(md(nested(3, "<p>a</p><p>b</p>"))).toBe("- - - a\n\n      b");
    const lines = Array.from({ length: 2000 }, (_, i) => `<p>line ${i}</p>`).join("");
    const out = md(nested(400, lines));
    expect(out.split("\n").filter((l) => l.includes("line ")).length).toBe(2000);
    expect(out.length).toBeLessThan(2 * 2000 * (2 * MAX_LIST_DEPTH + "line 1999".length + 2));
  });

  it("blockquotes and escaping of text that would become markdown", () => {
    expect(md("<blockquote><p>Quoted</p><p>twice</p></blockquote><p>1. not a list * star _under_</p><p># not a heading</p>"))
      .toBe("> Quoted\n>\n> twice\n\n1\\. not a list \\* star \\_under\\_\n\n\\# not a heading");
  });
  it("drops scripts, styles and empty blocks; collapses whitespace", () => {
    expect(md("<div>\n  <script>x()</script><style>p{}</style><p>  a\n  b  </p><div></div></div>")).toBe("a b");
  });
});
