import { describe, expect, it } from "vitest";
import { processHtml } from "./html.ts";
import { renderMarkdown } from "./render-markdown.ts";

const md = (html: string, scoring = true) => renderMarkdown(processHtml(html, "https://s.test/docs/p.html", { onlyMainContent: true, scoring }).root);
const para = (n: number, word = "content") => `<p>${Array.from({ length: n }, (_, i) => `${word} sentence ${i}, with enough words to read like prose.`).join(" ")}</p>`;

describe("main content beyond the removal list", () => {
  it("DocBook (PostgreSQL manual): the prev/up/next tables around the section go", () => {
    const nav = (where: string) => `<div class="nav${where}"><table><tr><th colspan="3">2.5. Querying a Table</th></tr><tr><td><a href="a.html">Prev</a></td><td><a href="b.html">Up</a></td><td><a href="c.html">Next</a></td></tr></table></div>`;
    const html = `<body>${nav("header")}<div class="sect1"><h2>2.5. Querying a Table</h2>${para(6)}<pre>SELECT 1;</pre></div>${nav("footer")}</body>`;
    expect(md(html, false)).toContain("[Prev](");
    const out = md(html);
    expect(out).not.toMatch(/\[(Prev|Next|Up)\]\(/);
    expect(out).toMatch(/^## 2\.5\. Querying a Table/);
    expect(out).toContain("SELECT 1;");
  });

  it("Sphinx (Python docs): role=navigation bars and sidebar go, role=main is the content, permalinks go", () => {
    const html = `<body><div class="related" role="navigation"><h3>Navigation</h3><ul><li><a href="genindex.html">index</a></li><li><a href="m.html">modules</a></li></ul></div>
      <div class="document"><div class="body" role="main"><h1>json — JSON encoder<a class="headerlink" href="#json">¶</a></h1>${para(8)}</div>
      <div class="sphinxsidebar" role="navigation"><h3>Table of Contents</h3><ul><li><a href="#a">a</a></li></ul></div></div>
      <div class="footer">© Copyright</div></body>`;
    const out = md(html);
    expect(out).toMatch(/^# json — JSON encoder\n/);
    expect(out).not.toMatch(/Navigation|modules|Table of Contents|¶|Copyright/);
  });

  it("one <main> with most of the text is the content; a page without one keeps short prose and in-content link lists", () => {
    const withMain = `<body><div class="topbar"><a href="/">Home</a> <a href="/a">A</a> <a href="/b">B</a></div><main><h1>Post</h1>${para(5)}</main><div>tiny trailer</div></body>`;
    expect(md(withMain)).toBe(md(`<body><main><h1>Post</h1>${para(5)}</main></body>`));
    const article = `<body><p>A short intro with no links.</p><div class="post"><h1>Post</h1>${para(6)}<h2>See also</h2><ul><li><a href="/x">X</a></li><li><a href="/y">Y</a></li><li><a href="/z">Z</a></li></ul></div></body>`;
    const out = md(article);
    expect(out).toContain("A short intro with no links.");
    expect(out).toContain("[X](https://s.test/x)");
  });

  it("landmarks are the outermost main / article still in the cleaned page, with either parser", () => {
    const page = (inner: string) => `<body><div class="intro">${para(2, "intro")}</div>${inner}</body>`;
    const cases = [
      // a main inside a removed element (excludeTags) is no landmark: the walk goes on as if there were none
      page(`<div class="old"><main>${para(6, "side")}</main></div><div>${para(3)}</div>`),
      // nested mains: the outer one is the landmark
      page(`<div role="MAIN"><h1>T</h1>${para(6)}<main>${para(1, "inner")}</main></div>`),
      // two mains: none is taken; one article (no main): it is
      page(`<main>${para(3, "one")}</main><main>${para(3, "two")}</main>`),
      page(`<article><h1>A</h1>${para(6)}<article>${para(1, "nested")}</article></article>`),
    ];
    const opts = { onlyMainContent: true, excludeTags: [".old"] };
    const [sidebar, nested, twoMains, article] = cases.map((html) => {
      const fast = renderMarkdown(processHtml(html, "https://s.test/p", opts, "fast").root);
      expect(fast).toBe(renderMarkdown(processHtml(html, "https://s.test/p", opts, "parse5").root));
      return fast;
    });
    expect(sidebar).not.toContain("side sentence");
    expect(sidebar).toContain("intro sentence");
    expect(nested).toMatch(/^# T/);
    expect(nested).toContain("inner sentence");
    expect(twoMains).toContain("intro sentence");
    expect(article).toMatch(/^# A/);
    expect(article).toContain("nested sentence");
  });

  it("a block that holds the page title stays even when it is full of short links (language pickers)", () => {
    const html = `<body><div id="content"><div id="preamble"><h1>Apache Module mod_request</h1><p>Languages: <a href="en">en</a> | <a href="fr">fr</a> | <a href="ja">ja</a></p></div><div class="section"><h2>Directives</h2>${para(12)}</div></div></body>`;
    expect(md(html)).toContain("# Apache Module mod\\_request");
  });

  it("the images format follows the content that is kept", () => {
    const html = `<body><div class="navheader"><a href="a"><img src="/prev.png">Prev</a> <a href="b">Up</a> <a href="c">Next</a></div><div class="sect1"><h2>T</h2>${para(6)}<img src="/figure.png"></div></body>`;
    expect(processHtml(html, "https://s.test/docs/p.html", { onlyMainContent: true }).images()).toEqual(["https://s.test/figure.png"]);
  });
});
