// Markdown straight from parse5's tree (the tree html.ts already built and cleaned): no second HTML parse.
// GitHub-flavoured: ATX headings, fenced code with the language of `language-*` / `lang-*` classes, `-` bullets and
// `1.` numbers with nested lists indented, GFM tables (first row as header), `**strong**`, `_em_`, `~~del~~`,
// inline code, links with titles, images, blockquotes, hard breaks, rules.
import type { DefaultTreeAdapterMap } from "parse5";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

const BLOCK = new Set([
  "address", "article", "aside", "blockquote", "body", "dd", "details", "dialog", "div", "dl", "dt", "fieldset", "figcaption",
  "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "li", "main", "nav", "ol",
  "p", "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "caption",
]);
const SKIP = new Set(["script", "style", "noscript", "template", "head", "iframe", "object", "svg", "canvas", "button", "select", "input", "textarea"]);

/** Elements are the nodes whose name does not start with '#' (#text, #comment, #document...). */
const isElement = (n: Node): n is Element => n.nodeName.charCodeAt(0) !== 35;
/** placeholder of a hard break until the line is trimmed */
const BR = "\u0001";
function attr(el: Element, name: string): string | undefined {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return undefined;
}
const text = (n: Node) => (n.nodeName === "#text" ? (n as DefaultTreeAdapterMap["textNode"]).value : "");

/** The text below a node as written (a `br` is a newline). */
function rawText(node: Node): string {
  if (node.nodeName === "#text") return text(node);
  if (!isElement(node)) return "";
  return node.tagName === "br" ? "\n" : rawTextOf(node.childNodes, "");
}

function rawTextOf(nodes: Node[], acc: string): string {
  for (const n of nodes) {
    if (n.nodeName === "#text") acc += (n as DefaultTreeAdapterMap["textNode"]).value;
    else if (isElement(n)) acc = n.tagName === "br" ? acc + "\n" : rawTextOf(n.childNodes, acc);
  }
  return acc;
}

/** characters that would turn plain text into markdown: \\ ` * _ [ ] < > */
const SPECIAL = new Uint8Array(128);
for (const c of "\\`*_[]<>") SPECIAL[c.charCodeAt(0)] = 1;

/** A URL as markdown link text: parentheses and whitespace percent-encoded. */
function urlText(url: string): string {
  return /[()\s]/.test(url) ? url.replace(/[()\s]/g, (c) => encodeURIComponent(c)) : url;
}

const isSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || (c > 127 && (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff));

/**
 * Text as inline markdown: every run of whitespace one space (like `s.replace(/\s+/g, " ")`) and, with `escape`,
 * markdown's special characters backslash-escaped; one pass, and no copy when nothing changes.
 */
function collapse(s: string, escape = false): string {
  let out = "";
  let from = 0;
  let changed = false;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 128 && escape && SPECIAL[c] === 1) {
      out += s.slice(from, i) + "\\";
      from = i;
      changed = true;
      continue;
    }
    if (!isSpace(c)) continue;
    let j = i + 1;
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    if (c !== 32 || j - i > 1) {
      out += s.slice(from, i) + " ";
      from = j;
      changed = true;
    }
    i = j - 1;
  }
  return changed ? out + s.slice(from) : s;
}

const LINE_START = /^(\s*)([#>+-]|\d+\.)(\s)/;

/** A line that would start a heading, quote or list item gets its marker escaped. */
function escapeLineStart(line: string): string {
  let i = 0;
  while (i < line.length && isSpace(line.charCodeAt(i))) i++;
  const c = line.charCodeAt(i);
  // only #, >, +, - and digits can start a marker
  if (!(c === 35 || c === 62 || c === 43 || c === 45 || (c >= 48 && c <= 57))) return line;
  return line.replace(LINE_START, (_m, sp: string, mark: string, after: string) => `${sp}${mark.replace(/([#>+\-.])/, "\\$1")}${after}`);
}

/** A line of inline content as a block: trimmed, hard breaks made, line starts escaped. */
function flushLine(line: string, out: string[]): void {
  let s = line;
  if (s.includes(BR)) {
    // eslint-disable-next-line no-control-regex -- BR is a control character on purpose (it cannot occur in text)
    s = s.replace(/^[\s\u0001]+|[\s\u0001]+$/g, "").replace(/ *\u0001 */g, "  \n");
    if (s) out.push(s.split("\n").map(escapeLineStart).join("\n"));
  } else {
    s = s.trim();
    if (s) out.push(escapeLineStart(s));
  }
}

/** a rendered list: its first line is an item marker (paragraphs that look like one were escaped) */
const LIST_START = /^(-|\d+\.) /;
/** a line break before a non-empty line (empty lines stay empty when indenting) */
const CONTINUATION = /\n(?=[^\n])/g;

/**
 * Blockquotes nested deeper than this add no further `> `: every level prefixed each line of everything inside it
 * again, so 500 nested quotes around 660 KB of paragraphs made 40 MB of markdown in 33 s of CPU. Deeper quotes are
 * laid out inside the deepest prefixed one (their text is all kept).
 */
export const MAX_QUOTE_DEPTH = 8;
/** Lists nested deeper than this are not indented further (for the same reason: 16 times the page's size seen). */
export const MAX_LIST_DEPTH = 12;

class Renderer {
  /** indentation of continuation lines in the list item being rendered ("" outside lists) */
  private indent = "";
  /** blockquotes around the block being rendered */
  private quotes = 0;
  /** lists around the block being rendered */
  private lists = 0;

  /** Inline content of an element's children. */
  children(node: Element): string {
    let s = "";
    for (const c of node.childNodes) s += this.inline(c);
    return s;
  }

  /** Inline content of a node as one markdown string (whitespace collapsed). */
  inline(node: Node): string {
    if (node.nodeName === "#text") {
      // the fast parser marks text that needs neither collapsing nor escaping
      const t = node as DefaultTreeAdapterMap["textNode"] & { plain?: boolean };
      return t.plain === true ? t.value : collapse(t.value, true);
    }
    if (!isElement(node)) return "";
    if (SKIP.has(node.tagName)) return "";
    switch (node.tagName) {
      case "br":
        return BR;
      case "strong":
      case "b":
        return wrap(this.children(node), "**");
      case "em":
      case "i":
        return wrap(this.children(node), "_");
      case "del":
      case "s":
      case "strike":
        return wrap(this.children(node), "~~");
      case "code":
      case "kbd":
      case "samp":
      case "tt": {
        const code = collapse(rawText(node));
        if (!code.trim()) return "";
        const fence = code.includes("`") ? "``" : "`";
        return `${fence}${fence.length > 1 ? " " : ""}${code}${fence.length > 1 ? " " : ""}${fence}`;
      }
      case "a": {
        const href = attr(node, "href");
        const label = this.children(node).trim();
        if (!href || href.startsWith("javascript:")) return label;
        const title = attr(node, "title");
        return `[${label}](${urlText(href)}${title ? ` "${title.replace(/"/g, '\\"')}"` : ""})`;
      }
      case "img": {
        const src = attr(node, "src");
        if (!src) return "";
        const alt = (attr(node, "alt") ?? "").replace(/[[\]]/g, "").replace(/\s+/g, " ");
        return `![${alt}](${urlText(src)})`;
      }
      default:
        // a block inside inline context (e.g. <div> in <a>): keep its text on this line
        return this.children(node);
    }
  }

  /** Renders a container's children as blocks (appended to `out`), prefixing nothing (callers indent). */
  blocksOf(parent: ParentNode, out: string[] = []): string[] {
    let line = "";
    for (const child of parent.childNodes) {
      if (isElement(child) && (BLOCK.has(child.tagName) || SKIP.has(child.tagName))) {
        if (line.length > 0) flushLine(line, out);
        line = "";
        if (!SKIP.has(child.tagName)) this.block(child, out);
      } else {
        line += this.inline(child);
      }
    }
    if (line.length > 0) flushLine(line, out);
    return out;
  }

  /** Appends the blocks of one block element to `out` (empty ones left out). */
  block(el: Element, out: string[]): void {
    let one: string;
    switch (el.tagName) {
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": {
        let content = "";
        for (const c of el.childNodes) content += this.inline(c);
        content = collapse(content).trim();
        one = content ? `${"#".repeat(Number(el.tagName[1]))} ${content}` : "";
        break;
      }
      case "hr":
        one = "---";
        break;
      case "pre":
        one = this.fence(el);
        break;
      case "blockquote":
        one = this.quote(el);
        break;
      case "ul":
      case "ol":
        one = this.list(el);
        break;
      case "table":
        one = this.table(el);
        break;
      default:
        this.blocksOf(el, out);
        return;
    }
    if (one.length > 0) out.push(one);
  }

  fence(pre: Element): string {
    const code = pre.childNodes.find((c): c is Element => isElement(c) && c.tagName === "code");
    const classes = `${attr(pre, "class") ?? ""} ${code ? (attr(code, "class") ?? "") : ""}`;
    const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(classes)?.[1] ?? "";
    const body = rawText(code ?? pre).replace(/^\n/, "").replace(/\n+$/, "");
    const fence = body.includes("```") ? "~~~" : "```";
    return `${fence}${lang}\n${body}\n${fence}`;
  }

  /**
   * A list. Inside a list item (`indent` set) its continuation lines come out indented for where they will stand,
   * so the items around it do not indent them again (linear in the text, however deep the nesting).
   */
  list(el: Element): string {
    const ordered = el.tagName === "ol";
    let n = Number(attr(el, "start") ?? "1") || 1;
    const outer = this.indent;
    let out = "";
    let first = true;
    this.lists++;
    const deepest = this.lists > MAX_LIST_DEPTH;
    for (const li of el.childNodes) {
      if (!isElement(li) || li.tagName !== "li") continue;
      const marker = ordered ? `${n++}.` : "-";
      // continuation lines of this item stand under the marker's text (past MAX_LIST_DEPTH, under the outer list's)
      const indent = deepest ? outer : outer + " ".repeat(marker.length + 1);
      this.indent = indent;
      const blocks = this.blocksOf(li);
      this.indent = outer;
      // a nested list (already indented) hugs the text before it; paragraphs of one item stay apart
      let content = "";
      for (let i = 0; i < blocks.length; i++) {
        const b = blocks[i] as string;
        const nested = LIST_START.test(b);
        if (i > 0) content += (nested ? "\n" : "\n\n") + indent;
        content += nested || !b.includes("\n") ? b : b.replace(CONTINUATION, `\n${indent}`);
      }
      out += first ? `${marker} ${content}` : `\n${outer}${marker} ${content}`;
      first = false;
    }
    this.lists--;
    return out;
  }

  quote(el: Element): string {
    this.quotes++;
    try {
      const inner = this.unindented(() => this.blocksOf(el)).join("\n\n");
      return this.quotes > MAX_QUOTE_DEPTH ? inner : inner.split("\n").map((l) => (l ? `> ${l}` : ">")).join("\n");
    } finally {
      this.quotes--;
    }
  }

  /** Renders with no list indentation (a blockquote's or a table cell's content is laid out on its own). */
  private unindented<T>(render: () => T): T {
    const outer = this.indent;
    this.indent = "";
    try {
      return render();
    } finally {
      this.indent = outer;
    }
  }

  table(el: Element): string {
    const rows: Element[] = [];
    const collect = (p: ParentNode) => {
      for (const c of p.childNodes) {
        if (!isElement(c)) continue;
        if (c.tagName === "tr") rows.push(c);
        else if (["thead", "tbody", "tfoot"].includes(c.tagName)) collect(c);
      }
    };
    collect(el);
    const cells = rows.map((r) =>
      r.childNodes.filter((c): c is Element => isElement(c) && (c.tagName === "td" || c.tagName === "th"))
        .map((c) => this.unindented(() => this.blocksOf(c)).join(" ").replace(/\n+/g, " ").replace(/\|/g, "\\|").trim()),
    ).filter((r) => r.length > 0);
    if (cells.length === 0) return "";
    const width = Math.max(...cells.map((r) => r.length));
    const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => r[i] ?? "").join(" | ")} |`;
    const [head, ...body] = cells;
    return [line(head as string[]), `| ${Array.from({ length: width }, () => "---").join(" | ")} |`, ...body.map(line)].join("\n");
  }
}

function wrap(s: string, mark: string): string {
  const trimmed = s.trim();
  if (!trimmed) return s;
  const lead = s.startsWith(" ") ? " " : "";
  const trail = s.endsWith(" ") ? " " : "";
  return `${lead}${mark}${trimmed}${mark}${trail}`;
}

/** Markdown of a (cleaned) parse5 tree. */
export function renderMarkdown(root: ParentNode): string {
  return new Renderer().blocksOf(root).join("\n\n").replace(/\n{3,}/g, "\n\n").trim();
}
