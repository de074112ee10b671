// A fast, forgiving HTML parser for conversion. It builds the same node shape as parse5's default tree adapter
// (nodeName, tagName, attrs, childNodes, parentNode, value), so the cleaner, the CSS matcher, the markdown renderer
// and parse5's serializer work on it unchanged; it runs several times faster than parse5's full HTML5 tree
// construction because it implements only the rules that change the shape of content:
// - void elements, raw-text elements (script, style, ...) and RCDATA (title, textarea), comments, doctypes;
// - implied end tags: p closed by block starts, li / dd / dt / option by their siblings, table rows and cells,
//   an open <a> closed by a new one, a heading closed by a heading, head closed by body content;
// - end tags close the nearest open element of that name within the current table cell (a stray one is ignored);
// - `/>` self-closes inside svg / math only; entities decoded in text and attributes (legacy rules, via entities);
// - no implied html/head/body/tbody, no foster parenting, no adoption agency (misnested inline tags end early).
// Differences from parse5 on malformed pages are covered by parse-html.test.ts (same markdown on the fixtures).
import { decodeHTMLAttribute } from "entities/decode";
import { foreignContent, type DefaultTreeAdapterMap, type Token } from "parse5";
import {
  ATTR_NAMES, FORMATTING, HEADINGS, SCOPE, TABLE_SCOPE, TABLE_SECTIONS, TAGS, tagOf, type Tag,
} from "./html-tags.ts";
import { countVisible, type Counted, decodeText, isUnicodeSpace, MARKDOWN_SPECIAL, SourceText } from "./text-nodes.ts";

type Document = DefaultTreeAdapterMap["document"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];
type ChildNode = DefaultTreeAdapterMap["childNode"];
type Attr = Element["attrs"][number];

const HTML_NS = "http://www.w3.org/1999/xhtml" as Element["namespaceURI"];

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 9 || c === 13 || c === 12;
const isLetter = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90);

/** End of a tag or attribute name starting at k: whitespace, '/', '>' (and '=' for attributes) end it. */
function nameEnd(src: string, k: number, attribute: boolean): number {
  const n = src.length;
  for (; k < n; k++) {
    const c = src.charCodeAt(k);
    if (isSpace(c) || c === 47 || c === 62 || (attribute && c === 61)) break;
  }
  return k;
}

function skipSpace(src: string, k: number): number {
  while (k < src.length && isSpace(src.charCodeAt(k))) k++;
  return k;
}
const rawEnd = new Map<string, RegExp>();

function endOf(name: string): RegExp {
  let re = rawEnd.get(name);
  if (!re) rawEnd.set(name, (re = new RegExp(`</${name}(?=[\\s/>])[^>]*>?`, "gi")));
  return re;
}

type TextNode = DefaultTreeAdapterMap["textNode"];

class TreeBuilder {
  readonly doc: Document;
  readonly indexed: Element[] = [];
  private readonly stack: ParentNode[];
  private top: ParentNode;
  /** depth inside svg / math, where `/>` self-closes */
  private foreign = 0;
  /** open elements per tag name: an implied close looks at the stack only when one is open */
  private readonly open = new Map<string, number>();
  /** open `a` elements (text inside counts as link text) */
  private openLinks = 0;
  /** the last child of `top` when it is a text node (the next text joins it) */
  private lastText: TextNode | null = null;

  constructor() {
    this.doc = { nodeName: "#document", mode: "no-quirks", childNodes: [], textChars: 0, linkChars: 0, linkCount: 0, titleCount: 0 } as unknown as Document;
    this.stack = [this.doc];
    this.top = this.doc;
  }

  /** `raw`: the content of a raw-text or RCDATA element (not counted as page text). */
  text(raw: string, decode = true, rawText = false): void {
    if (raw.length === 0) return;
    if (this.tagOfTop() === "head" && /\S/.test(raw)) this.pop();
    const value = decode ? decodeText(raw) : raw;
    if (!rawText) {
      const n = countVisible(value);
      const top = this.top as unknown as Counted;
      top.textChars += n;
      if (this.openLinks > 0) top.linkChars += n;
    }
    this.append({ nodeName: "#text", value, parentNode: this.top } as TextNode);
  }

  /** Adds a text node to `top`, joined to the text before it. */
  private append(text: TextNode): void {
    const last = this.lastText;
    if (last !== null && last.parentNode === this.top) last.value += text.value;
    else {
      this.adopt(text);
      this.lastText = text;
    }
  }

  /** Appends a node to `top`'s children; a first child gets an array of one (a pushed-to empty array reserves 17 slots). */
  private adopt(node: ChildNode): void {
    const top = this.top;
    if (top.childNodes.length === 0) top.childNodes = [node];
    else top.childNodes.push(node);
  }

  /** Adds an element to `top`. */
  private appendElement(el: Element): void {
    this.adopt(el);
    this.lastText = null;
  }

  /** Page text `src[from, to)` (entities decoded when read). */
  textAt(src: string, from: number, to: number): void {
    if (this.tagOfTop() === "head") {
      this.text(src.slice(from, to));
      return;
    }
    let n = 0;
    let entity = false;
    let cr = false;
    // plain: no whitespace but single spaces, no character markdown escapes (the renderer takes such text as is)
    let plain = true;
    let space = false;
    for (let i = from; i < to; i++) {
      const c = src.charCodeAt(i);
      if (c > 32 && c !== 160) {
        n++;
        space = false;
        if (c < 128 && MARKDOWN_SPECIAL[c] === 1) {
          plain = false;
          if (c === 38) entity = true;
        } else if (c > 127 && isUnicodeSpace(c)) plain = false;
      } else {
        if (space || c !== 32) {
          plain = false;
          if (c === 13) cr = true;
        }
        space = true;
      }
    }
    const node = new SourceText(src, from, to, this.top, plain, entity || cr);
    if (entity) n = countVisible(node.value);
    const top = this.top as unknown as Counted;
    top.textChars += n;
    if (this.openLinks > 0) top.linkChars += n;
    this.append(node as unknown as TextNode);
  }

  private tagOfTop(): string | undefined {
    return (this.top as Element).tagName;
  }

  private push(el: Element): void {
    this.stack.push(el);
    this.top = el;
    this.open.set(el.tagName, (this.open.get(el.tagName) ?? 0) + 1);
    if (el.tagName === "a") this.openLinks++;
    else if (el.tagName === "svg" || el.tagName === "math") this.foreign++;
  }

  private pop(): void {
    const el = this.stack.pop() as Element;
    this.open.set(el.tagName, (this.open.get(el.tagName) as number) - 1);
    if (el.tagName === "a") this.openLinks--;
    else if (el.tagName === "svg" || el.tagName === "math") this.foreign--;
    this.top = this.stack[this.stack.length - 1] as ParentNode;
    // a closed element's counts join its parent's
    const c = el as unknown as Counted;
    const p = this.top as unknown as Counted;
    p.textChars += c.textChars;
    p.linkChars += c.linkChars;
    p.linkCount += c.linkCount;
    p.titleCount += c.titleCount;
  }

  /** Closes what is still open at the end of the document (their counts reach the root). */
  finish(): void {
    while (this.stack.length > 1) this.pop();
  }

  /** Index of the nearest open element named `name` (stopping at `stop` or a scope boundary), or -1. */
  private find(name: string, stop?: Set<string>, scope: Set<string> = SCOPE): number {
    if (!this.open.get(name) && this.foreign === 0) return -1;
    for (let i = this.stack.length - 1; i > 0; i--) {
      const tag = (this.stack[i] as Element).tagName;
      if (tag === name || (this.foreign > 0 && tag.toLowerCase() === name)) return i;
      if (scope.has(tag) || stop?.has(tag)) return -1;
    }
    return -1;
  }

  private popTo(index: number): void {
    while (this.stack.length > index) this.pop();
  }

  private closeIfOpen(name: string, stop?: Set<string>): void {
    const i = this.find(name, stop);
    if (i > 0) this.popTo(i);
  }

  /** Returns the element when its content follows (not void, not self-closed). */
  /** `indexed`: list the element whatever its tag (it has a role). */
  start(tag: Tag, attrs: Attr[], selfClosing: boolean, indexed = false): Element | null {
    const name = tag.name;
    if (this.foreign === 0) {
      if (name === "html" || name === "body") {
        const existing = this.stack.find((n) => (n as Element).tagName === name) as Element | undefined;
        if (existing) {
          for (const a of attrs) if (!existing.attrs.some((b) => b.name === a.name)) existing.attrs.push(a);
          return null;
        }
      }
      if (!tag.headContent && this.tagOfTop() === "head") this.pop();
      if (tag.closesP) this.closeIfOpen("p");
      switch (name) {
        case "li":
          this.closeIfOpen("li", LIST_STOP);
          break;
        case "dd":
        case "dt":
          this.closeIfOpen("dd", DL_STOP);
          this.closeIfOpen("dt", DL_STOP);
          break;
        case "tr":
          this.closeIfOpen("td", ROW_STOP);
          this.closeIfOpen("th", ROW_STOP);
          this.closeIfOpen("tr");
          if (this.tagOfTop() === "table") this.start(TBODY, [], false); // rows live in a row group
          break;
        case "td":
        case "th":
          this.closeIfOpen("td", ROW_STOP);
          this.closeIfOpen("th", ROW_STOP);
          break;
        case "thead":
        case "tbody":
        case "tfoot":
          this.closeIfOpen("td", ROW_STOP);
          this.closeIfOpen("th", ROW_STOP);
          this.closeIfOpen("tr");
          for (const s of TABLE_SECTIONS) this.closeIfOpen(s);
          break;
        case "option":
          if (this.tagOfTop() === "option") this.pop();
          break;
        case "optgroup":
          if (this.tagOfTop() === "option") this.pop();
          if (this.tagOfTop() === "optgroup") this.pop();
          break;
        case "a": {
          // a link inside a link: the open one ends; formatting elements opened inside it continue around the new one
          const open = this.find("a");
          if (open > 0) {
            const formatting = (this.stack.slice(open + 1) as Element[]).filter((e) => FORMATTING.has(e.tagName));
            this.popTo(open);
            for (const f of formatting) {
              const copy = { ...f, attrs: f.attrs.map((a) => ({ ...a })), childNodes: [], parentNode: this.top, textChars: 0, linkChars: 0, linkCount: 0, titleCount: 0 } as Element;
              this.appendElement(copy);
              this.push(copy);
            }
          }
          break;
        }
        default:
          if (tag.heading && HEADINGS.has(this.tagOfTop() ?? "")) this.pop();
      }
    }
    let tagName = name;
    if (this.foreign > 0 || name === "svg") {
      // SVG's camelCase names (viewBox, clipPath), as parse5 restores them
      foreignContent.adjustTokenSVGAttrs({ attrs } as Token.TagToken);
      tagName = foreignContent.SVG_TAG_NAMES_ADJUSTMENT_MAP.get(name) ?? name;
    }
    const el = {
      nodeName: tagName, tagName, attrs, namespaceURI: HTML_NS, childNodes: NO_CHILDREN, parentNode: this.top,
      textChars: 0, linkChars: 0, linkCount: name === "a" ? 1 : 0, titleCount: name === "h1" || name === "h2" ? 1 : 0,
    } as unknown as Element;
    this.appendElement(el);
    if (tag.indexed || indexed) this.indexed.push(el);
    if (tag.isVoid || (selfClosing && this.foreign > 0)) return null;
    this.push(el);
    return el;
  }

  end(tag: Tag): void {
    const name = tag.name;
    if (name === "html" || name === "body") {
      if (this.tagOfTop() === "head") this.pop();
      return;
    }
    if (name === "br") {
      this.start(BR, [], false);
      return;
    }
    // the end of a table or of one of its parts also ends the cell it is written in
    const i = tag.tablePart ? this.find(name, undefined, TABLE_SCOPE) : this.find(name);
    if (i > 0) this.popTo(i);
    else if (name === "p" && this.foreign === 0) {
      // a stray </p> is an empty paragraph
      this.appendElement({
        nodeName: "p", tagName: "p", attrs: [], namespaceURI: HTML_NS, childNodes: [], parentNode: this.top, textChars: 0, linkChars: 0, linkCount: 0, titleCount: 0,
      } as unknown as Element);
    }
  }

  /** Closes the element just opened for raw text. */
  closeRaw(el: Element): void {
    const i = this.stack.lastIndexOf(el);
    if (i > 0) this.popTo(i);
  }
}

const TBODY = tagOf("tbody");
const BR = tagOf("br");
const LIST_STOP = new Set(["ul", "ol"]);
const DL_STOP = new Set(["dl"]);
const ROW_STOP = new Set(["tr"]);

/** Parses a whole HTML document into a parse5-shaped tree. Never throws on malformed input. */
export function parseHtml(src: string): Document {
  return parseHtmlIndexed(src).doc;
}

/** the children of an element until its first (frozen: shared by every empty element, replaced by `adopt`) */
const NO_CHILDREN = Object.freeze([]) as unknown as ChildNode[];

/** attributes of the tag being read */
const scratch: Attr[] = [];
const NO_ATTR: Attr = { name: "", value: "" };

/** The tree and its INDEXED_TAGS elements (and elements with a role) in document order. */
export function parseHtmlIndexed(src: string): { doc: Document; indexed: Element[] } {
  const b = new TreeBuilder();
  const n = src.length;
  /** the next '&' at or after the last attribute value read (n: none): one forward scan instead of a search per value */
  let amp = -1;
  let i = 0;
  while (i < n) {
    const lt = src.indexOf("<", i);
    if (lt < 0) {
      b.textAt(src, i, n);
      break;
    }
    if (lt > i) b.textAt(src, i, lt);
    i = lt;
    const c = src.charCodeAt(i + 1);
    if (c === 33 /* ! */) {
      if (src.startsWith("<!--", i)) {
        const e = src.indexOf("-->", i + 4);
        i = e < 0 ? n : e + 3;
      } else {
        const e = src.indexOf(">", i + 2);
        i = e < 0 ? n : e + 1;
      }
      continue;
    }
    if (c === 63 /* ? */) {
      const e = src.indexOf(">", i + 2);
      i = e < 0 ? n : e + 1;
      continue;
    }
    if (c === 47 /* / */) {
      let e: number;
      if (isLetter(src.charCodeAt(i + 2))) {
        const to = nameEnd(src, i + 3, false);
        b.end(TAGS.find(src, i + 2, to) ?? tagOf(src.slice(i + 2, to).toLowerCase()));
        e = src.charCodeAt(to) === 62 ? to : src.indexOf(">", to); // nearly always right after the name
      } else {
        e = src.indexOf(">", i + 2);
        if (e < 0) b.text(src.slice(i)); // "</" then nothing that closes: text
      }
      i = e < 0 ? n : e + 1;
      continue;
    }
    if (!isLetter(c)) {
      b.text("<");
      i++;
      continue;
    }
    let j = nameEnd(src, i + 2, false);
    const tag = TAGS.find(src, i + 1, j) ?? tagOf(src.slice(i + 1, j).toLowerCase());
    const name = tag.name;
    let count = 0;
    let role = false;
    let closed = false;
    for (;;) {
      // between attributes: whitespace and stray slashes
      while (j < n) {
        const d = src.charCodeAt(j);
        if (isSpace(d) || d === 47) j++;
        else break;
      }
      if (j >= n) break;
      if (src.charCodeAt(j) === 62) {
        j++;
        closed = true;
        break;
      }
      const nameStart = j;
      j = nameEnd(src, j + 1, true);
      const attrName = ATTR_NAMES.find(src, nameStart, j)?.name ?? src.slice(nameStart, j).toLowerCase();
      let value = "";
      let k = skipSpace(src, j);
      if (src.charCodeAt(k) === 61 /* = */) {
        k = skipSpace(src, k + 1);
        const q = src.charCodeAt(k);
        if (q === 34 || q === 39) {
          const e = src.indexOf(q === 34 ? '"' : "'", k + 1);
          if (e < 0) {
            // an unterminated quote: the tag ends at the next '>'
            const gt = src.indexOf(">", k);
            j = gt < 0 ? n : gt + 1;
            closed = gt >= 0;
            break;
          }
          value = src.slice(k + 1, e);
          j = e + 1;
        } else {
          const start = k;
          while (k < n && !isSpace(src.charCodeAt(k)) && src.charCodeAt(k) !== 62) k++;
          value = src.slice(start, k);
          j = k;
        }
        if (amp < j - value.length - 1) {
          amp = src.indexOf("&", j - value.length - 1);
          if (amp < 0) amp = n;
        }
        if (amp < j) value = decodeHTMLAttribute(value);
      }
      let duplicate = false;
      for (let a = 0; a < count; a++) if ((scratch[a] as Attr).name === attrName) duplicate = true;
      if (!duplicate) scratch[count++] = { name: attrName, value };
      if (attrName === "role") role = true;
    }
    // an array of the exact size (a pushed-to array reserves 17 slots), the scratch cleared for the next tag
    const attrs = count === 0 ? [] : count === 1 ? [scratch[0] as Attr] : count === 2 ? [scratch[0] as Attr, scratch[1] as Attr] : scratch.slice(0, count);
    for (let a = 0; a < count; a++) scratch[a] = NO_ATTR;
    if (!closed) break; // a tag cut off at the end of the document is dropped, as browsers do
    const selfClosing = src.charCodeAt(j - 2) === 47;
    const el = b.start(tag, attrs, selfClosing, role);
    i = j;
    if (!el) continue;
    if (tag.raw || name === "plaintext") {
      let contentEnd = n;
      let after = n;
      if (name !== "plaintext") {
        const re = endOf(name);
        re.lastIndex = i;
        const m = re.exec(src);
        if (m) {
          contentEnd = m.index;
          after = m.index + m[0].length;
        }
      }
      const content = src.slice(i, contentEnd);
      if (content) b.text(name === "textarea" && content.startsWith("\n") ? content.slice(1) : content, tag.rcdata, true);
      b.closeRaw(el);
      i = after;
    } else if ((name === "pre" || name === "listing") && src.charCodeAt(i) === 10) {
      i++; // a newline right after <pre> is not content
    }
  }
  b.finish();
  return { doc: b.doc, indexed: b.indexed };
}
