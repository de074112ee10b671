// Differential property test of the fast HTML parser against parse5 (the reference), with fast-check.
// Well-formed pages (a valid content model, escaped text and attributes): the markdown of the fast tree equals the
// markdown of parse5's tree, with and without onlyMainContent. Mutated pages (unclosed tags, stray end tags, misnested
// inline elements, broken attributes, NUL bytes, huge attribute values, truncation): the conversion never throws and
// ends within a time bound. Seeded, so a CI failure replays with the printed seed and path.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { processHtml } from "./html.ts";
import { renderMarkdown } from "./render-markdown.ts";

// FUZZ_SEED / FUZZ_RUNS explore further by hand (the runs in CI are the fixed seed's first 300)
const SEED = Number(process.env.FUZZ_SEED ?? 0x7a11);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** A page converts in milliseconds; this bound only catches runaway (quadratic or looping) parses on a busy machine. */
const MAX_MS_PER_PAGE = 2000;

const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;");

const word = fc.constantFrom("alpha", "beta", "Gamma", "delta_x", "*star*", "under_score", "a & b", "x < y", "1.", "#tag", "`tick`", "[link]", "café", "日本語", "—", "\u00a0", "&amp;", "a\tb", "  ");
const reference = fc.constantFrom("&nbsp;", "&copy;", "&mdash;", "&#169;", "&#x2014;", "&lt;tag&gt;", "&quot;", "&amp;amp;", "&hellip;", "&#10;");
const separator = fc.constantFrom(" ", " ", "\n", "  ", "\n    ", "\t");
const text = fc.array(fc.tuple(fc.oneof({ weight: 4, arbitrary: word.map(escapeText) }, { weight: 1, arbitrary: reference }), separator), { minLength: 1, maxLength: 6 })
  .map((ws) => ws.map(([w, sep], i) => (i ? sep : "") + w).join(""));
const attrValue = fc.constantFrom("x", "a b", "/path/to?q=1&r=2", "https://example.com/p#f", "", "\"quoted\"", "it's");
const href = fc.constantFrom("/a", "b.html", "#top", "https://example.com/x", "../up/", "?q=1", "mailto:x@example.com", "page.html #x");
const quoted = (k: string, v: string, style: number) =>
  style === 1 && /^[\w/.-]+$/.test(v) ? ` ${k}=${v}` : style === 2 && !v.includes("'") ? ` ${k}='${v.replace(/&/g, "&amp;")}'` : ` ${k}="${escapeAttr(v)}"`;
const attrs = fc.array(fc.tuple(fc.constantFrom("class", "id", "title", "data-x", "lang", "role", "CLASS", "aria-label"), attrValue, fc.nat(2)), { maxLength: 3 })
  .map((list) => [...new Map(list.map(([k, v, q]) => [k.toLowerCase(), [k, v, q] as const]))].map(([, [k, v, q]]) => quoted(k, v, q)).join(""));

/** Phrasing content without links: text and inline elements nested properly. */
const { inline } = fc.letrec((tie) => ({
  inline: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text,
    fc.tuple(fc.constantFrom("b", "i", "em", "strong", "code", "span", "small", "s", "u", "sub", "sup", "abbr", "q", "kbd", "mark"), attrs, fc.array(tie("inline") as fc.Arbitrary<string>, { minLength: 1, maxLength: 3 }))
      .map(([t, a, kids]) => `<${t}${a}>${kids.join("")}</${t}>`),
    fc.constantFrom("<br>", '<img src="/i.png" alt="an image">', '<img src="data:image/png;base64,AAAA" alt="">', "<wbr>"),
  ),
}));
/** A link holds phrasing content but no other link. */
const link = fc.tuple(href, fc.array(inline as fc.Arbitrary<string>, { minLength: 1, maxLength: 2 })).map(([h, kids]) => `<a href="${escapeAttr(h)}">${kids.join("")}</a>`);
const phrasing = fc.array(fc.oneof(inline as fc.Arbitrary<string>, link), { minLength: 1, maxLength: 4 }).map((xs) => xs.join(""));

/** Flow content: blocks nested properly. */
const { block } = fc.letrec((tie) => ({
  block: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(attrs, phrasing).map(([a, p]) => `<p${a}>${p}</p>`),
    fc.tuple(fc.integer({ min: 1, max: 6 }), phrasing).map(([n, p]) => `<h${n}>${p}</h${n}>`),
    fc.tuple(fc.constantFrom("ul", "ol"), fc.array(fc.oneof(phrasing, (tie("block") as fc.Arbitrary<string>)), { minLength: 1, maxLength: 4 }))
      .map(([t, items]) => `<${t}>${items.map((i) => `<li>${i}</li>`).join("")}</${t}>`),
    fc.tuple(fc.constantFrom("div", "section", "blockquote", "article", "aside", "nav", "header", "footer", "main"), attrs, fc.array((tie("block") as fc.Arbitrary<string>), { minLength: 1, maxLength: 3 }))
      .map(([t, a, kids]) => `<${t}${a}>${kids.join("")}</${t}>`),
    fc.tuple(fc.array(phrasing, { minLength: 1, maxLength: 3 }), fc.array(fc.array(phrasing, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }))
      .map(([head, rows]) => `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("")}</tbody></table>`),
    fc.tuple(fc.constantFrom("", ' class="language-js"', ' class="lang-py"'), fc.array(text, { minLength: 1, maxLength: 3 }))
      .map(([c, lines]) => `<pre><code${c}>${lines.join("\n")}</code></pre>`),
    fc.array(fc.tuple(phrasing, phrasing), { minLength: 1, maxLength: 3 }).map((ds) => `<dl>${ds.map(([t, d]) => `<dt>${t}</dt><dd>${d}</dd>`).join("")}</dl>`),
    fc.tuple(fc.array(phrasing, { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([items, nested]) => `<ul>${items.map((i) => `<li>${i}`).join("\n")}${nested ? "<li><ol><li>one<li>two</ol>" : ""}</ul>`),
    fc.array(phrasing, { minLength: 2, maxLength: 3 }).map((ps) => `<div>${ps.map((p) => `<p>${p}`).join("")}</div>`),
    fc.array(fc.array(phrasing, { minLength: 1, maxLength: 2 }), { minLength: 1, maxLength: 3 })
      .map((rows) => `<table>${rows.map((r) => `<tr>${r.map((c) => `<td>${c}`).join("")}`).join("")}</table>`),
    fc.tuple(phrasing, (tie("block") as fc.Arbitrary<string>)).map(([cap, b]) => `<figure>${b}<figcaption>${cap}</figcaption></figure>`),
    fc.tuple(phrasing, (tie("block") as fc.Arbitrary<string>)).map(([sum, b]) => `<details><summary>${sum}</summary>${b}</details>`),
    fc.tuple(phrasing, (tie("block") as fc.Arbitrary<string>)).map(([c, b]) => `<table><tr><td>${c}<td>${b}</table>`),
    fc.tuple(fc.constantFrom("DIV", "Section", "P"), phrasing).map(([t, p]) => `<${t}>${p}</${t.toLowerCase()}>`),
    phrasing.map((p) => `<form action="/s"><label>${p} <input type="text" name="q" value="v"></label><select name="s"><option>a<option selected>b</select><button>Go</button><textarea>\n  a &lt; b</textarea></form>`),
    fc.constantFrom("<hr>", '<img src="/big.png" alt="big" title="t">', "<noscript><p>enable js</p></noscript>", '<iframe src="/f"></iframe>', "<template><p>t</p></template>", '<svg viewBox="0 0 1 1"><path d="M0 0"/><title>s</title></svg>', "<pre>\nfirst line\n  second</pre>"),
    fc.constant("<script>if (a < b) { x('</p>'); }</script>"),
    fc.constant("<!-- a comment <p> -->"),
  ),
}));

/** A well-formed page: doctype, head with metadata, a body of blocks. */
const page = fc.tuple(text, fc.array(block as fc.Arbitrary<string>, { minLength: 1, maxLength: 8 }), fc.boolean()).map(([title, blocks, lang]) =>
  `<!DOCTYPE html>\n<html${lang ? ' lang="en"' : ""}><head><meta charset="utf-8"><title>${title}</title>` +
  `<meta name="description" content="${escapeAttr(title)}"><style>p { color: red }</style></head>\n<body>${blocks.join("\n")}</body></html>`,
);

/** One mutation of a page: what broken pages in the wild look like. */
type Mutation = (html: string, at: number, n: number) => string;
const endTags = (html: string) => [...html.matchAll(/<\/[a-z0-9]+>/g)];
const pick = <T>(xs: T[], at: number): T | undefined => xs[at % Math.max(1, xs.length)];
const mutations: Record<string, Mutation> = {
  unclosedTag: (h, at) => { const m = pick(endTags(h), at); return m ? h.slice(0, m.index) + h.slice(m.index + m[0].length) : h; },
  strayEndTag: (h, at, n) => { const i = at % (h.length + 1); return h.slice(0, i) + `</${["p", "div", "li", "td", "table", "b", "a", "body", "html", "span", "tr"][n % 11]}>` + h.slice(i); },
  misnestedInline: (h, at, n) => { const i = at % (h.length + 1); const [a, b] = [["b", "i"], ["em", "strong"], ["a", "b"], ["i", "p"]][n % 4] as [string, string]; return h.slice(0, i) + `<${a}>x<${b}>y</${a}>z</${b}>` + h.slice(i); },
  swappedEndTags: (h, at) => { const ms = endTags(h); const m1 = pick(ms, at); const m2 = pick(ms, at + 1); if (!m1 || !m2 || m1 === m2) return h; const [x, y] = m1.index < m2.index ? [m1, m2] : [m2, m1]; return h.slice(0, x.index) + y[0] + h.slice(x.index + x[0].length, y.index) + x[0] + h.slice(y.index + y[0].length); },
  brokenAttribute: (h, at, n) => { const ms = [...h.matchAll(/="/g)]; const m = pick(ms, at); if (!m) return h; const i = m.index + 1; return h.slice(0, i) + ['"', "'", "", "=", "<", '" x=">', "\"'"][n % 7] + h.slice(i + 1); },
  nulBytes: (h, at, n) => { const i = at % (h.length + 1); return h.slice(0, i) + "\0".repeat(1 + (n % 3)) + h.slice(i); },
  hugeAttribute: (h, at, n) => { const ms = [...h.matchAll(/<(p|div|a|span|td|li)\b/g)]; const m = pick(ms, at); const i = m ? m.index + m[0].length : 0; return h.slice(0, i) + ` data-huge="${"x&amp;y ".repeat(20_000 + (n % 5) * 10_000)}"` + h.slice(i); },
  unterminatedQuote: (h, at) => { const i = at % (h.length + 1); return h.slice(0, i) + '<a href="/unterminated title=x>' + h.slice(i); },
  truncated: (h, at) => h.slice(0, at % (h.length + 1)),
  randomSyntax: (h, at, n) => { const i = at % (h.length + 1); return h.slice(0, i) + ["<", ">", "&", "</", "<!--", "<![CDATA[", "<!", "&#", "&#x110000;", "&nbsp", "\r", "\ufeff", "<svg><p>", "<math>", "<table><td>", "<template>", "<select><option>"][n % 17] + h.slice(i); },
};
const mutation = fc.tuple(fc.constantFrom(...Object.keys(mutations)), fc.nat(), fc.nat());
const mutated = fc.tuple(page, fc.array(mutation, { minLength: 1, maxLength: 5 })).map(([html, ms]) => ({
  names: ms.map(([name]) => name),
  html: ms.reduce((h, [name, at, n]) => (mutations[name] as Mutation)(h, at, n), html),
}));

function markdownOf(html: string, parser: "fast" | "parse5", onlyMainContent: boolean): string {
  return renderMarkdown(processHtml(html, "https://example.com/docs/page.html", { onlyMainContent }, parser).root);
}

/** Runs the fast conversion and throws when it takes longer than the bound. */
function timedFast(html: string, onlyMainContent: boolean): string {
  const t0 = performance.now();
  const md = markdownOf(html, "fast", onlyMainContent);
  const ms = performance.now() - t0;
  if (ms > MAX_MS_PER_PAGE) throw new Error(`conversion took ${ms.toFixed(0)} ms (bound ${MAX_MS_PER_PAGE} ms) on a ${html.length}-char page`);
  return md;
}

describe("fast parser vs parse5 (property)", () => {
  it("well-formed pages: the same markdown as parse5's tree", () => {
    fc.assert(
      fc.property(page, fc.boolean(), (html, onlyMainContent) => {
        expect(timedFast(html, onlyMainContent)).toBe(markdownOf(html, "parse5", onlyMainContent));
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);

  it("mutated pages: never throws, never hangs", () => {
    fc.assert(
      fc.property(mutated, fc.boolean(), ({ html }, onlyMainContent) => {
        const md = timedFast(html, onlyMainContent);
        expect(typeof md).toBe("string");
      }),
      { seed: SEED, numRuns: RUNS },
    );
  }, 120_000);

  // found by the property (seed 2): parse5's tree counted a textarea's text as page text in main-content scoring,
  // the fast parser does not (RCDATA), so a link block next to a form was kept by one and dropped by the other
  it("regression: raw-text and RCDATA content is not page text for either tree", () => {
    const html = '<body><div><a href="/a">under_score alpha alpha alpha alpha</a></div><div><a href="/a">ab</a></div><div><a href="/a">alpha #tag</a><textarea>a &lt; b</textarea></div></body>';
    expect(markdownOf(html, "fast", true)).toBe(markdownOf(html, "parse5", true));
  });
});
