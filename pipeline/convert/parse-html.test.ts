import { parse, serialize } from "parse5";
import { describe, expect, it } from "vitest";
import { processHtml } from "./html.ts";
import { parseHtml } from "./parse-html.ts";
import { countsOf, countVisible } from "./text-nodes.ts";
import { renderMarkdown } from "./render-markdown.ts";

/** The body of a parsed document as HTML (our tree, serialised by parse5). */
const body = (html: string): string => {
  const doc = parseHtml(html);
  return serialize(doc as never);
};

describe("parseHtml", () => {
  it("builds parse5's node shape: elements, attributes, text with parents", () => {
    const doc = parseHtml('<p class="a" id=b>Hi <b>there</b></p>');
    const p = doc.childNodes[0] as never as { tagName: string; attrs: { name: string; value: string }[]; childNodes: { nodeName: string; value?: string; parentNode: unknown }[] };
    expect(p.tagName).toBe("p");
    expect(p.attrs).toEqual([{ name: "class", value: "a" }, { name: "id", value: "b" }]);
    expect(p.childNodes[0]).toMatchObject({ nodeName: "#text", value: "Hi " });
    expect(p.childNodes[0]?.parentNode).toBe(p);
  });

  it("void elements, self-closing syntax outside svg, comments, doctypes, processing instructions", () => {
    expect(body("<!DOCTYPE html><!-- c --><?xml x?><p>a<br>b<img src=x>c<div/>d</div>")).toBe('<p>a<br>b<img src="x">c</p><div>d</div>');
    expect(body('<svg><path d="M0"/><circle r="1"/></svg>x')).toBe('<svg><path d="M0"></path><circle r="1"></circle></svg>x');
  });

  it("attributes: quotes, unquoted, no value, duplicates (first wins), entities, any case", () => {
    expect(body(`<a HREF='/x?a=1&amp;b=2' title="say &quot;hi&quot;" data-x=y hidden href=/dup>t</a>`)).toBe(
      '<a href="/x?a=1&amp;b=2" title="say &quot;hi&quot;" data-x="y" hidden="">t</a>',
    );
    // an unterminated quote ends the tag at the next '>'
    expect(body('<p title="oops>text</p>')).toBe("<p>text</p>");
  });

  it("tag and attribute names in any case, known or not, come out lower-case", () => {
    expect(body('<DIV Class="a" ID=b><SpAn DATA-Custom-Thing="1" ARIA-LABEL=x>t</sPaN><My-Widget Foo>w</MY-WIDGET></Div>')).toBe(
      '<div class="a" id="b"><span data-custom-thing="1" aria-label="x">t</span><my-widget foo="">w</my-widget></div>',
    );
    // names that share a known name's letters are not taken for it
    expect(body("<spans>a</spans><sp>b</sp><classy>c</classy><p CLASSX=1 clas=2>d</p>")).toBe('<spans>a</spans><sp>b</sp><classy>c</classy><p classx="1" clas="2">d</p>');
  });

  it("raw text and RCDATA elements", () => {
    const doc = parseHtml("<title>A &amp; B</title><script>if (a < b && c > d) x('</div>')</script><style>p>a{}</style><textarea>\n&lt;x&gt;</textarea>");
    expect(serialize(doc as never)).toBe("<title>A &amp; B</title><script>if (a < b && c > d) x('</div>')</script><style>p>a{}</style><textarea>&lt;x&gt;</textarea>");
  });

  it("implied end tags: paragraphs, list items, definitions, table rows and cells, options, headings", () => {
    expect(body("<p>one<p>two<div>three</div>")).toBe("<p>one</p><p>two</p><div>three</div>");
    expect(body("<ul><li>a<li>b<ul><li>c</ul><li>d</ul>")).toBe("<ul><li>a</li><li>b<ul><li>c</li></ul></li><li>d</li></ul>");
    expect(body("<dl><dt>t<dd>d<dt>u</dl>")).toBe("<dl><dt>t</dt><dd>d</dd><dt>u</dt></dl>");
    expect(body("<table><tr><td>1<td>2<tr><th>3</table>")).toBe("<table><tbody><tr><td>1</td><td>2</td></tr><tr><th>3</th></tr></tbody></table>");
    expect(body("<select><option>a<option>b</select>")).toBe("<select><option>a</option><option>b</option></select>");
    expect(body("<h1>a<h2>b</h2>")).toBe("<h1>a</h1><h2>b</h2>");
  });

  it("end tags close the nearest open element inside the current cell; stray ones are ignored; </p> alone is an empty paragraph", () => {
    expect(body("<div><table><tr><td><span>x</div>y</td></tr></table></div>")).toBe("<div><table><tbody><tr><td><span>xy</span></td></tr></tbody></table></div>");
    expect(body("<b>bold<i>both</b>plain</i>")).toBe("<b>bold<i>both</i></b>plain");
    expect(body("a</p>b</br>c")).toBe("a<p></p>b<br>c");
  });

  it("a link inside a link ends the first; formatting opened inside it continues", () => {
    expect(body('<a href="1"><em><a href="2">x</a></em></a>')).toBe('<a href="1"><em></em></a><em><a href="2">x</a></em>');
  });

  it("entities in text (legacy ones without ;), CRLF, a newline after <pre>", () => {
    expect(body("<p>&lt;a&gt; &copy &#x41;&#66; &nbsp;x\r\ny</p><pre>\ncode\n</pre>")).toBe("<p>&lt;a&gt; © AB &nbsp;x\ny</p><pre>code\n</pre>");
  });

  it("never throws on truncated or hostile input", () => {
    for (const s of ["<", "</", "<a", '<a href="x', "<!--", "<script>x", "<p><<>>&&;&#;</p>", "<" + "div>".repeat(5000), "</a></b></c>", "<svg><math></svg>x"]) {
      expect(() => parseHtml(s), s).not.toThrow();
    }
  });
});

describe("fast parser vs parse5: the same documents", () => {
  // pages with the structures real sites use; the markdown, links, metadata and cleaned HTML must not depend on
  // which parser built the tree (the benchmark script checks the same on the PostgreSQL and Python manuals)
  const pages = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>T &amp; U</title><meta name="description" content="D">
     <meta property="og:title" content="OG"><link rel="icon" href="/f.ico"><base href="https://s.test/docs/"></head>
     <body><header><nav><a href="/">Home</a><a href="a.html">A</a></nav></header>
     <main><h1>Title <code>x</code></h1><p>Para with <a href="b.html#frag" title="B">link</a>, <em>em</em>, <strong>strong</strong>.
     <p>Second para<ul><li>one<li>two<ol start=3><li>three</ol></ul>
     <table><tr><th>k<th>v<tr><td>a|b<td><code>c</code></table>
     <pre><code class="language-sql">SELECT 1;
     SELECT 2;</code></pre><blockquote><p>quoted</blockquote><img srcset="s.png 1x, l.png 2x" src="s.png" alt="pic">
     </main><aside class="sidebar">side</aside><footer>foot</footer><script>var x = "<p>";</script></body></html>`,
    `<div class="content"><h2>Defs</h2><dl><dt>term<dd>definition<dt>other<dd>more</dl><hr><p>a<br>b</p>
     <div id="cookie">cookies</div><p>text &lt;tag&gt; &copy; 2024</p></div>`,
    `<body><div class="navheader"><table><tr><td><a href="prev.html">Prev</a><td><a href="next.html">Next</a></table></div>
     <div class="sect1"><p>Use <a class="glossterm" href="g.html#X"><em class="glossterm"><a href="g.html#X" title="X">X</a></em></a> here.</p>
     <div class="note"><h3>Note</h3><p>Careful</p></div><pre class="programlisting">a &lt; b</pre></div></body>`,
  ];
  for (const [i, html] of pages.entries()) {
    it(`page ${i + 1}`, () => {
      for (const onlyMainContent of [true, false]) {
        const fast = processHtml(html, "https://s.test/docs/page.html", { onlyMainContent }, "fast");
        const reference = processHtml(html, "https://s.test/docs/page.html", { onlyMainContent }, "parse5");
        expect(renderMarkdown(fast.root)).toBe(renderMarkdown(reference.root));
        expect(fast.links).toEqual(reference.links);
        expect(fast.metadata).toEqual(reference.metadata);
        expect(fast.html()).toBe(reference.html());
        expect(fast.images()).toEqual(reference.images());
      }
    });
  }

  it("text the parser takes as plain renders as the collapsing, escaping path renders it", () => {
    const texts = ["plain words here", " lead and trail ", "two  spaces", "new\nline", "tab\there", "a*b_c", "[x]", "<tag>", "a &amp; b", "nbsp\u00a0x",
      "em\u2003space", "x\u2028y", "ünïcödé ok", "back\\slash", "`tick`", "", " ", "\r\n"];
    for (const t of texts) {
      const html = `<p>${t.replace(/</g, "&lt;").replace(/&lt;tag>/, "&lt;tag&gt;")}<b>${t.replace(/</g, "&lt;")}</b></p>`;
      const fast = renderMarkdown(processHtml(html, "https://s.test/", { onlyMainContent: false }, "fast").root);
      expect(fast, JSON.stringify(t)).toBe(renderMarkdown(processHtml(html, "https://s.test/", { onlyMainContent: false }, "parse5").root));
    }
  });

  it("parse5 is really the reference here (the two trees are built by different code)", () => {
    expect(parseHtml("<p>x")).not.toHaveProperty("childNodes.0.sourceCodeLocation");
    expect(parse("<p>x").childNodes[0]?.nodeName).toBe("html"); // parse5 implies html/head/body; ours does not
    expect(parseHtml("<p>x").childNodes[0]?.nodeName).toBe("p");
  });
});

describe("text counts kept by the parser", () => {
  type N = { nodeName: string; tagName?: string; value?: string; childNodes?: N[] };
  const RAW = ["script", "style", "title", "textarea", "noscript"];
  const recount = (n: N, inLink = false): { text: number; link: number; links: number; titles: number } => {
    const link = inLink || n.tagName === "a";
    const out = { text: 0, link: 0, links: n.tagName === "a" ? 1 : 0, titles: n.tagName === "h1" || n.tagName === "h2" ? 1 : 0 };
    for (const c of n.childNodes ?? []) {
      if (c.nodeName === "#text") {
        if (RAW.includes(n.tagName ?? "")) continue; // raw text and RCDATA are not page text
        const v = countVisible(c.value ?? "");
        out.text += v;
        if (link) out.link += v;
      } else if (c.tagName) {
        const s = recount(c, link);
        out.text += s.text;
        out.link += s.link;
        out.links += s.links;
        out.titles += s.titles;
      }
    }
    return out;
  };
  // text inside a link is link text for every element that holds it, the link's own descendants included
  const check = (n: N, inLink = false) => {
    const c = countsOf(n);
    if (c) expect({ text: c.textChars, link: c.linkChars, links: c.linkCount, titles: c.titleCount }, n.tagName ?? n.nodeName).toEqual(recount(n, inLink));
    for (const child of n.childNodes ?? []) if (child.tagName) check(child, inLink || n.tagName === "a");
  };
  const page = `<html><head><title>T</title><style>p{}</style></head><body><nav><a href="/">Home</a> <a href="/x">X</a></nav>
    <div class="content"><h1>Title <a href="#t">¶</a></h1><p>Some <b>bold <a href="/y">link <i>text</i></a></b> here.<p>Next<ul><li>a<li><a href="/z">z</a></ul>
    <script>var x = "<a>";</script><table><tr><td>1<td><a href="/w">w</a></table></div><footer>foot <a href="/f">f</a></footer>`;

  it("match a recount of every element, right after parsing and after cleaning dropped elements", () => {
    check(parseHtml(page) as never);
    for (const onlyMainContent of [true, false]) check(processHtml(page, "https://s.test/", { onlyMainContent, scoring: false }).root as never);
  });
});
