// Main content beyond the removal list (onlyMainContent). The list in html.ts removes what is named as chrome
// (header, nav, .sidebar, ...); real sites name theirs otherwise (DocBook's div.navheader, Sphinx's div.related),
// so two measured rules follow it:
// 1. landmarks: ARIA roles navigation / banner / contentinfo / complementary / search are chrome like the tags they
//    stand for; one `main` (or role=main) holding a fair share of the text is the content, and so is a lone article;
// 2. dominant descent: from the root, while one child holds most of the text, its siblings that are mostly links
//    (navigation bars, prev/next tables, link lists) are dropped, and the walk goes on into that child.
// Nothing else is dropped: short paragraphs, notes and code next to the content stay.
import type { DefaultTreeAdapterMap } from "parse5";
import { RAW_TEXT, RCDATA } from "./html-tags.ts";
import { countsOf, countVisible } from "./text-nodes.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

const CHROME_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary", "search"]);
/** a landmark must hold at least this share of the page's text to be taken as the content */
const LANDMARK_SHARE = 0.25;
/** a child holding at least this share of its parent's text is the way down */
const DOMINANT_SHARE = 0.6;
/** a sibling of the way down whose text is at least this much link text is navigation */
const NAV_LINK_DENSITY = 0.3;
/** ... or that has this many links with at most NAV_CHARS_PER_LINK characters of text per link (prev/up/next bars) */
const NAV_MIN_LINKS = 3;
const NAV_CHARS_PER_LINK = 25;
/** ... unless it is this big a part of its parent */
const NAV_MAX_SHARE = 0.25;

const isElement = (n: Node): n is Element => "tagName" in n;
const HEADING = /^h[1-6]$/;
/** elements that frame a page (the walk goes down through them) */
const CONTAINERS = new Set(["body", "div", "section", "article", "main", "center", "td", "font", "span", "form"]);

function attr(el: Element, name: string): string | undefined {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return undefined;
}

/** ARIA landmarks that mean header / footer / nav / aside / search form. */
export function isChromeLandmark(el: Element): boolean {
  const role = attr(el, "role");
  return role !== undefined && CHROME_ROLES.has(role.trim().toLowerCase());
}

interface Stats {
  text: number;
  link: number;
  /** `a` elements */
  links: number;
  /** h1 / h2 elements: a block with a page or section title is content */
  titles: number;
}

/** Non-whitespace characters of text, and of link text, per element: the parser's counts, else computed once per tree (parse5's trees). */
class TextStats {
  private readonly cache = new Map<ParentNode, Stats>();

  of(node: ParentNode): Stats {
    const counted = countsOf(node);
    if (counted) return { text: counted.textChars, link: counted.linkChars, links: counted.linkCount, titles: counted.titleCount };
    let s = this.cache.get(node);
    if (s) return s;
    const inLink = isElement(node as Node) && (node as Element).tagName === "a";
    const tag = isElement(node as Node) ? (node as Element).tagName : "";
    s = { text: 0, link: 0, links: inLink ? 1 : 0, titles: tag === "h1" || tag === "h2" ? 1 : 0 };
    // as the fast parser counts: the content of raw-text and RCDATA elements (textarea, noscript, ...) is not page text
    const raw = RAW_TEXT.has(tag) || RCDATA.has(tag);
    for (const child of node.childNodes) {
      if (child.nodeName === "#text") {
        if (raw) continue;
        const n = countVisible((child as DefaultTreeAdapterMap["textNode"]).value);
        s.text += n;
        if (inLink) s.link += n;
      } else if (isElement(child)) {
        const c = this.of(child);
        s.text += c.text;
        s.link += inLink ? c.text : c.link;
        s.links += c.links;
        s.titles += c.titles;
      }
    }
    this.cache.set(node, s);
    return s;
  }
}

/**
 * The outermost `main` (or role=main) elements and the outermost `article` elements of a cleaned tree, in document
 * order (html.ts finds them among the elements the parser listed, so focusing needs no walk of its own).
 */
export interface Landmarks {
  mains: Element[];
  articles: Element[];
}

/** Which landmark list an element belongs to, if any. */
export function landmarkOf(el: Element): "main" | "article" | undefined {
  if (el.tagName === "main" || attr(el, "role")?.toLowerCase() === "main") return "main";
  return el.tagName === "article" ? "article" : undefined;
}

const fragment = (children: Node[]): ParentNode => ({ nodeName: "#document-fragment", childNodes: children }) as unknown as ParentNode;

/** A block that is mostly links, or many links with little text each, a small part of its parent, and untitled. */
function isNavigation(s: Stats, parentText: number): boolean {
  if (s.text === 0 || s.titles > 0 || s.text >= NAV_MAX_SHARE * parentText) return false;
  return s.link >= NAV_LINK_DENSITY * s.text || (s.links >= NAV_MIN_LINKS && s.text <= NAV_CHARS_PER_LINK * s.links);
}

/**
 * The main content of a cleaned tree (changed in place; the returned node may be a new holder). `pruned` tells
 * whether anything was left out.
 */
export function focusMainContent(root: ParentNode, landmarks: Landmarks): { root: ParentNode; pruned: boolean } {
  const stats = new TextStats();
  const total = stats.of(root).text;
  if (total === 0) return { root, pruned: false };
  let pruned = false;
  let top = root;
  const { mains, articles } = landmarks;
  const landmark = mains.length === 1 ? mains[0] : mains.length === 0 && articles.length === 1 ? articles[0] : undefined;
  if (landmark && stats.of(landmark).text >= LANDMARK_SHARE * total) {
    top = fragment([landmark]);
    pruned = true;
  }

  let node: ParentNode = top;
  for (;;) {
    const parentText = stats.of(node).text;
    if (parentText === 0) break;
    let dominant: Element | undefined;
    for (const child of node.childNodes) {
      if (isElement(child) && stats.of(child).text >= DOMINANT_SHARE * parentText) dominant = child;
    }
    // the walk stays in the page's frame: once the text is in a paragraph, list, table or code block, its
    // siblings are the content's own (a "See also" list next to a paragraph stays)
    if (!dominant || !CONTAINERS.has(dominant.tagName)) break;
    let previous: Element | undefined;
    const kept = node.childNodes.filter((child) => {
      if (!isElement(child)) return true;
      const introduced = previous !== undefined && HEADING.test(previous.tagName); // a heading's own list stays
      previous = child;
      if (child === dominant || HEADING.test(child.tagName) || introduced) return true;
      return !isNavigation(stats.of(child), parentText);
    });
    if (kept.length < node.childNodes.length) {
      node.childNodes = kept;
      pruned = true;
    }
    node = dominant;
  }
  return { root: top, pruned };
}

/** Image sources of a tree, in document order. */
export function imageSources(root: ParentNode, out: string[] = []): string[] {
  for (const child of root.childNodes) {
    if (!isElement(child)) continue;
    if (child.tagName === "img") {
      const src = attr(child, "src");
      if (src && !src.startsWith("data:")) out.push(src);
    }
    imageSources(child, out);
  }
  return out;
}
