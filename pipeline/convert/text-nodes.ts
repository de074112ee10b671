// Text in the fast parser's tree (parse-html.ts): nodes that read their value from the page source when first used,
// and the text statistics kept on every node for main-content scoring.
import { decodeHTML } from "entities/decode";
import type { DefaultTreeAdapterMap } from "parse5";

type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

export const decodeText = (s: string): string => {
  if (s.includes("\r")) s = s.replace(/\r\n?/g, "\n");
  return s.includes("&") ? decodeHTML(s) : s;
};

/** ASCII characters that make text not plain: markdown's \\ ` * _ [ ] < > and the '&' of an entity */
export const MARKDOWN_SPECIAL = new Uint8Array(128);
for (const ch of "\\`*_[]<>&") MARKDOWN_SPECIAL[ch.charCodeAt(0)] = 1;
/** JavaScript's \s beyond Latin-1 (what the renderer collapses) */
export const isUnicodeSpace = (c: number): boolean =>
  c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;

/**
 * A text node whose value is sliced (and entity-decoded) from the source only when first read: the text of dropped
 * navigation is never copied, the rest is copied once by the renderer.
 */
export class SourceText {
  readonly nodeName = "#text";
  parentNode: ParentNode;
  /** no whitespace but single spaces, no character markdown escapes, no entity: the renderer takes it as is */
  plain: boolean;
  private readonly src: string;
  private readonly from: number;
  private readonly to: number;
  /** has an entity or a carriage return: decodeText applies */
  private readonly encoded: boolean;
  private decoded: string | undefined;

  constructor(src: string, from: number, to: number, parentNode: ParentNode, plain: boolean, encoded: boolean) {
    this.src = src;
    this.from = from;
    this.to = to;
    this.parentNode = parentNode;
    this.plain = plain;
    this.encoded = encoded;
  }

  get value(): string {
    if (this.decoded === undefined) {
      const raw = this.src.slice(this.from, this.to);
      this.decoded = this.encoded ? decodeText(raw) : raw;
    }
    return this.decoded;
  }

  set value(v: string) {
    this.decoded = v;
    this.plain = false;
  }
}

/**
 * Text statistics the parser keeps on every node it builds (read by main-content.ts, adjusted by the cleaner when it
 * drops an element), so that main-content scoring needs no traversal of its own.
 */
export interface Counted {
  /** non-whitespace characters of text below (raw text of script/style/title not counted) */
  textChars: number;
  /** ... of which inside links */
  linkChars: number;
  /** `a` elements below, this one included */
  linkCount: number;
  /** h1 / h2 elements below, this one included */
  titleCount: number;
}

/** Characters that are not whitespace. */
export function countVisible(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 32 && c !== 160) n++;
  }
  return n;
}

/** The counts of a node built by this parser, or undefined (parse5's own trees, holders). */
export function countsOf(node: object): Counted | undefined {
  return (node as Partial<Counted>).textChars === undefined ? undefined : (node as Counted);
}

/** Takes a dropped element's counts out of its ancestors. */
export function uncount(el: Element): void {
  const c = countsOf(el);
  if (!c) return;
  for (let p = el.parentNode as (ParentNode & { parentNode?: ParentNode | null }) | null; p; p = p.parentNode ?? null) {
    const a = countsOf(p);
    if (!a) break;
    a.textChars -= c.textChars;
    a.linkChars -= c.linkChars;
    a.linkCount -= c.linkCount;
    a.titleCount -= c.titleCount;
  }
}
