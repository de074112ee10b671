// A fast, forgiving HTML parser for conversion. It builds the same node shape as parse5's default tree adapter
// (nodeName, tagName, attrs, childNodes, parentNode, value), so the cleaner, the CSS matcher, the markdown renderer
// and parse5's serializer work on it unchanged; it runs several times faster than parse5's full HTML5 tree
// construction because it implements only the rules that change the shape of content:
// - void elements, raw-text elements (script, style, ...) and RCDATA (title, textarea), comments, doctypes;
// - implied end tags: p closed by block starts, li / dd / dt / option by their siblings, table rows and cells,
//   an open <a> closed by a new one, a heading closed by a heading, head closed by body content;
// - end tags close the nearest open element of that name within the current table cell (a stray one is ignored);
// - `/>` self-closes inside svg / math only; entities decoded in text and attributes (legacy rules, via entities);
// - no implied html/head/body/tbody, no foster parenting, no adoption agency (misnested inline tags end early);
// - elements nest at most 512 deep, as in browsers (phrasing elements 64 more); deeper ones become siblings, so a
//   100,000-deep page converts and keeps its text in order (tree-builder.ts, MAX_TREE_DEPTH).
// Differences from parse5 on malformed pages are covered by parse-html.test.ts (same markdown on the fixtures).
import { decodeHTMLAttribute } from "entities/decode";
import type { DefaultTreeAdapterMap } from "parse5";
import { ATTR_NAMES, TAGS, tagOf } from "./html-tags.ts";
import { TreeBuilder } from "./tree-builder.ts";

type Document = DefaultTreeAdapterMap["document"];
type Element = DefaultTreeAdapterMap["element"];
type Attr = Element["attrs"][number];

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

/** Parses a whole HTML document into a parse5-shaped tree. Never throws on malformed input. */
export function parseHtml(src: string): Document {
  return parseHtmlIndexed(src).doc;
}


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
