// Tree construction for the fast parser (parse-html.ts reads the tokens): parse5's node shape, the implied-end-tag
// rules that shape content, and the text counts kept on every node (see the rules listed in parse-html.ts).
import { foreignContent, type DefaultTreeAdapterMap, type Token } from "parse5";
import { CLOSES_P, FORMATTING, HEADINGS, SCOPE, TABLE_SCOPE, TABLE_SECTIONS, tagOf, type Tag } from "./html-tags.ts";
import { countVisible, type Counted, decodeText, isUnicodeSpace, MARKDOWN_SPECIAL, SourceText } from "./text-nodes.ts";

type Document = DefaultTreeAdapterMap["document"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];
type ChildNode = DefaultTreeAdapterMap["childNode"];
type Attr = Element["attrs"][number];

const HTML_NS = "http://www.w3.org/1999/xhtml" as Element["namespaceURI"];
/** the children of an element until its first (frozen: shared by every empty element, replaced by `adopt`) */
const NO_CHILDREN = Object.freeze([]) as unknown as ChildNode[];

type TextNode = DefaultTreeAdapterMap["textNode"];

export class TreeBuilder {
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
  /** how deep in the tree each element of the stack is (past MAX_TREE_DEPTH less than its place on the stack) */
  private readonly depths: number[] = [0];
  /** the depth of `top` */
  private depth = 0;

  constructor() {
    this.doc = { nodeName: "#document", mode: "no-quirks", childNodes: [], textChars: 0, linkChars: 0, linkCount: 0, titleCount: 0 } as unknown as Document;
    this.stack = [this.doc];
    this.top = this.doc;
  }

  /** `raw`: the content of a raw-text or RCDATA element (not counted as page text). */
  text(raw: string, decode = true, rawText = false): void {
    if (raw.length === 0) return;
    if (this.tagOfTop() === "head" && /\S/.test(raw)) this.pop();
    if (this.depth >= MAX_TREE_DEPTH) this.continueTop();
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

  /** Appends a node to `parent`'s children; a first child gets an array of one (a pushed-to empty array reserves 17 slots). */
  private adopt(node: ChildNode, parent: ParentNode = this.top): void {
    if (parent.childNodes.length === 0) parent.childNodes = [node];
    else parent.childNodes.push(node);
  }

  /**
   * Adds an element to `top`, or, past MAX_TREE_DEPTH, to `top`'s parent: there elements become siblings (as in
   * Chromium's and WebKit's parsers), so the tree stays shallow enough for every recursive walk of it (cleaning,
   * markdown, the serializer) and the text of a 100,000-deep page still comes out. Phrasing elements (links, emphasis,
   * spans: the tags that do not close a paragraph) may nest INLINE_ROOM deeper, so that a paragraph at the bound keeps
   * its links. The stack of open elements is not cut: end tags still close what they opened.
   */
  private appendElement(el: Element): void {
    const depth = this.depth;
    const flat = depth >= MAX_TREE_DEPTH && (depth >= MAX_TREE_DEPTH + INLINE_ROOM || CLOSES_P.has(el.tagName));
    const parent = flat ? ((this.top as Element).parentNode as ParentNode) : this.top;
    el.parentNode = parent;
    this.adopt(el, parent);
    this.lastText = null;
  }

  /** Page text `src[from, to)` (entities decoded when read). */
  textAt(src: string, from: number, to: number): void {
    if (this.tagOfTop() === "head") {
      this.text(src.slice(from, to));
      return;
    }
    if (this.depth >= MAX_TREE_DEPTH) this.continueTop();
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

  /**
   * At MAX_TREE_DEPTH, an element opened inside `top` may have gone after it (a sibling): text that follows goes into
   * a copy of `top` placed after that element, so that the page's text keeps its order.
   */
  private continueTop(): void {
    const top = this.top as Element;
    const siblings = top.parentNode?.childNodes;
    if (!siblings || siblings[siblings.length - 1] === top) return;
    // the original is finished: its counts join its parent's now (pop does that for the elements it closes)
    addCounts(top, top.parentNode as ParentNode);
    const copy = { ...top, attrs: top.attrs.map((a) => ({ ...a })), childNodes: NO_CHILDREN, textChars: 0, linkChars: 0, linkCount: 0, titleCount: 0 } as Element;
    this.adopt(copy, top.parentNode as ParentNode); // beside the original, at the same depth
    this.lastText = null;
    if (tagOf(copy.tagName).indexed || copy.attrs.some((a) => a.name === "role")) this.indexed.push(copy);
    this.stack[this.stack.length - 1] = copy;
    this.top = copy;
  }

  private tagOfTop(): string | undefined {
    return (this.top as Element).tagName;
  }

  private push(el: Element): void {
    this.depth = el.parentNode === this.top ? this.depth + 1 : this.depth;
    this.depths.push(this.depth);
    this.stack.push(el);
    this.top = el;
    this.open.set(el.tagName, (this.open.get(el.tagName) ?? 0) + 1);
    if (el.tagName === "a") this.openLinks++;
    else if (el.tagName === "svg" || el.tagName === "math") this.foreign++;
  }

  private pop(): void {
    const el = this.stack.pop() as Element;
    this.depths.pop();
    this.depth = this.depths[this.depths.length - 1] as number;
    this.open.set(el.tagName, (this.open.get(el.tagName) as number) - 1);
    if (el.tagName === "a") this.openLinks--;
    else if (el.tagName === "svg" || el.tagName === "math") this.foreign--;
    this.top = this.stack[this.stack.length - 1] as ParentNode;
    // a closed element's counts join its parent's (the element below it on the stack, or past MAX_TREE_DEPTH an
    // element further down, still open)
    addCounts(el, el.parentNode as ParentNode);
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

  /** Ends the table cell still open in the current row, if any. */
  private closeCell(): void {
    this.closeIfOpen("td", ROW_STOP);
    this.closeIfOpen("th", ROW_STOP);
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
          this.closeCell();
          this.closeIfOpen("tr");
          if (this.tagOfTop() === "table") this.start(TBODY, [], false); // rows live in a row group
          break;
        case "td":
        case "th":
          this.closeCell();
          break;
        case "thead":
        case "tbody":
        case "tfoot":
          this.closeCell();
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

/**
 * How deep elements nest in the tree (html and body included): Chromium's and WebKit's HTML parsers use the same bound
 * (512, `kMaximumHTMLParserDOMTreeDepth`), so a deep page converts as the browser path sees it.
 */
export const MAX_TREE_DEPTH = 512;
/** How much deeper than MAX_TREE_DEPTH phrasing elements nest (the tree's depth is at most the sum). */
export const INLINE_ROOM = 64;

function addCounts(from: ParentNode, to: ParentNode): void {
  const c = from as unknown as Counted;
  const p = to as unknown as Counted;
  p.textChars += c.textChars;
  p.linkChars += c.linkChars;
  p.linkCount += c.linkCount;
  p.titleCount += c.titleCount;
}

const TBODY = tagOf("tbody");
const BR = tagOf("br");
const LIST_STOP = new Set(["ul", "ol"]);
const DL_STOP = new Set(["dl"]);
const ROW_STOP = new Set(["tr"]);
