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

const isElement = (n: Node): n is Element => "tagName" in n;
/** placeholder of a hard break until the line is trimmed */
const BR = "\u0001";
function attr(el: Element, name: string): string | undefined {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return undefined;
}
const text = (n: Node) => (n.nodeName === "#text" ? (n as DefaultTreeAdapterMap["textNode"]).value : "");

function rawText(node: Node): string {
  if (node.nodeName === "#text") return text(node);
  if (isElement(node) && node.tagName === "br") return "\n";
  return "childNodes" in node ? node.childNodes.map(rawText).join("") : "";
}

const SPECIAL = /[\\`*_[\]<>]/;
const SPECIALS = /([\\`*_[\]<>])/g;

/** Escapes what would otherwise turn plain text into markdown. */
function escapeInline(s: string): string {
  return SPECIAL.test(s) ? s.replace(SPECIALS, "\\$1") : s;
}

/** A URL as markdown link text: parentheses and whitespace percent-encoded. */
function urlText(url: string): string {
  return /[()\s]/.test(url) ? url.replace(/[()\s]/g, (c) => encodeURIComponent(c)) : url;
}

const isSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || (c > 127 && (c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff));

/** Text with every run of whitespace as one space (like `s.replace(/\s+/g, " ")`, without a copy when nothing changes). */
function collapse(s: string): string {
  let out = "";
  let from = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (!isSpace(c)) continue;
    let j = i + 1;
    while (j < n && isSpace(s.charCodeAt(j))) j++;
    if (c !== 32 || j - i > 1) {
      out += s.slice(from, i) + " ";
      from = j;
    }
    i = j - 1;
  }
  return from === 0 ? s : out + s.slice(from);
}

function escapeLineStart(line: string): string {
  return line.replace(/^(\s*)([#>+-]|\d+\.)(\s)/, (_m, sp: string, mark: string, after: string) => `${sp}${mark.replace(/([#>+\-.])/, "\\$1")}${after}`);
}

class Renderer {
  private readonly blocks: string[] = [];

  /** Inline content of an element's children. */
  children(node: Element): string {
    let s = "";
    for (const c of node.childNodes) s += this.inline(c);
    return s;
  }

  /** Inline content of a node as one markdown string (whitespace collapsed). */
  inline(node: Node): string {
    if (node.nodeName === "#text") return escapeInline(collapse(text(node)));
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

  /** Renders a container's children as blocks, prefixing nothing (callers indent). */
  blocksOf(parent: ParentNode): string[] {
    const out: string[] = [];
    let line = "";
    const flush = () => {
      if (line.length === 0) return;
      let s = line;
      line = "";
      if (s.includes(BR)) {
        // eslint-disable-next-line no-control-regex -- BR is a control character on purpose (it cannot occur in text)
        s = s.replace(/^[\s\u0001]+|[\s\u0001]+$/g, "").replace(/ *\u0001 */g, "  \n");
        if (s) out.push(s.split("\n").map(escapeLineStart).join("\n"));
      } else {
        s = s.trim();
        if (s) out.push(escapeLineStart(s));
      }
    };
    for (const child of parent.childNodes) {
      if (isElement(child) && (BLOCK.has(child.tagName) || SKIP.has(child.tagName))) {
        flush();
        if (!SKIP.has(child.tagName)) for (const b of this.block(child)) if (b.length > 0) out.push(b);
      } else {
        line += this.inline(child);
      }
    }
    flush();
    return out;
  }

  block(el: Element): string[] {
    switch (el.tagName) {
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": {
        const content = el.childNodes.map((c) => this.inline(c)).join("").replace(/\s+/g, " ").trim();
        return content ? [`${"#".repeat(Number(el.tagName[1]))} ${content}`] : [];
      }
      case "hr":
        return ["---"];
      case "pre":
        return [this.fence(el)];
      case "blockquote":
        return [this.blocksOf(el).join("\n\n").split("\n").map((l) => (l ? `> ${l}` : ">")).join("\n")];
      case "ul":
      case "ol":
        return [this.list(el)];
      case "table":
        return [this.table(el)];
      default:
        return this.blocksOf(el);
    }
  }

  fence(pre: Element): string {
    const code = pre.childNodes.find((c): c is Element => isElement(c) && c.tagName === "code");
    const classes = `${attr(pre, "class") ?? ""} ${code ? (attr(code, "class") ?? "") : ""}`;
    const lang = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(classes)?.[1] ?? "";
    const body = rawText(code ?? pre).replace(/^\n/, "").replace(/\n+$/, "");
    const fence = body.includes("```") ? "~~~" : "```";
    return `${fence}${lang}\n${body}\n${fence}`;
  }

  list(el: Element): string {
    const ordered = el.tagName === "ol";
    let n = Number(attr(el, "start") ?? "1") || 1;
    const items: string[] = [];
    for (const li of el.childNodes) {
      if (!isElement(li) || li.tagName !== "li") continue;
      const marker = ordered ? `${n++}.` : "-";
      const pad = " ".repeat(marker.length + 1);
      // a nested list hugs the text before it; paragraphs of one item stay apart
      const blocks = this.blocksOf(li);
      let content = "";
      for (let i = 0; i < blocks.length; i++) {
        const b = blocks[i] as string;
        content += i === 0 ? b : (/^(-|\d+\.) /.test(b) ? "\n" : "\n\n") + b;
      }
      // continuation lines are indented under the marker (empty lines stay empty)
      items.push(`${marker} ${content.includes("\n") ? content.replace(/\n(?=[^\n])/g, `\n${pad}`) : content}`);
    }
    return items.join("\n");
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
        .map((c) => this.blocksOf(c).join(" ").replace(/\n+/g, " ").replace(/\|/g, "\\|").trim()),
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
