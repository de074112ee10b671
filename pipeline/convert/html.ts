// HTML processing: metadata, links (from the raw HTML), and the cleaned HTML of the page. The tree comes from
// parse-html.ts (parse5's node shape, built faster); parse5 serialises the cleaned tree for the html format.
import { parse, serialize, type DefaultTreeAdapterMap } from "parse5";
import { INDEXED_TAGS } from "./html-tags.ts";
import { parseHtmlIndexed } from "./parse-html.ts";
import { uncount } from "./text-nodes.ts";
import { focusMainContent, imageSources, isChromeLandmark, landmarkOf, type Landmarks } from "./main-content.ts";
import { HrefResolver, resolveLink } from "../url/normalize-url.ts";
import { matches, parseSelector, type Selector } from "./selector.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

export interface HtmlExtract {
  metadata: Record<string, string | string[]>;
  links: string[];
  /** Absolute image URLs of the cleaned content (largest srcset candidate), computed on demand. */
  images(): string[];
  /** The cleaned tree (scripts, styles and — with onlyMainContent — page chrome removed; URLs absolute). */
  root: ParentNode;
  /** The cleaned tree as HTML (serialised on demand). */
  html(): string;
}

const ALWAYS_REMOVED = new Set(["script", "style", "noscript", "meta", "head", "template", "link", "title", "base"]);
const CHROME_TAGS = new Set(["header", "footer", "nav", "aside"]);
const CHROME_CLASSES = new Set([
  "header", "top", "navbar", "footer", "bottom", "sidebar", "side", "aside", "modal", "popup", "overlay", "ad", "ads", "advert",
  "lang-selector", "language", "social", "social-media", "social-links", "menu", "navigation", "breadcrumbs", "share", "widget", "cookie",
]);
/** one of CHROME_CLASSES as a whole class name, any case */
const CHROME_CLASS = new RegExp(`(?:^|\\s)(?:${[...CHROME_CLASSES].map((c) => c.replace(/-/g, "\\-")).join("|")})(?=\\s|$)`, "i");
const CHROME_IDS = new Set(["header", "footer", "sidebar", "modal", "ad", "language-selector", "social", "nav", "breadcrumbs", "share", "widget", "cookie"]);

/** Elements are the nodes whose name does not start with '#' (#text, #comment, #document...). */
const isElement = (n: Node): n is Element => n.nodeName.charCodeAt(0) !== 35;
function attr(el: Element, name: string): string | undefined {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return undefined;
}

/** class attribute value -> names one of CHROME_CLASSES (pages repeat a few class values thousands of times) */
const chromeClassVerdicts = new Map<string, boolean>();

function isChromeClass(cls: string): boolean {
  let verdict = chromeClassVerdicts.get(cls);
  if (verdict === undefined) {
    verdict = CHROME_CLASS.test(cls);
    // bounded: a page of generated class names must not grow the process
    if (chromeClassVerdicts.size >= 10_000) chromeClassVerdicts.clear();
    chromeClassVerdicts.set(cls, verdict);
  }
  return verdict;
}

function isChrome(el: Element, scoring: boolean): boolean {
  if (CHROME_TAGS.has(el.tagName)) return true;
  for (const a of el.attrs) {
    if (a.name === "class") {
      if (isChromeClass(a.value)) return true;
    } else if (a.name === "id") {
      if (CHROME_IDS.has(a.value.toLowerCase())) return true;
    } else if (a.name === "role" && scoring && isChromeLandmark(el)) return true;
  }
  return false;
}

/** A heading's permalink marker (Sphinx / MkDocs `¶`, `#`, `§` linking to its own fragment): not content. */
function isPermalink(a: Element): boolean {
  const only = a.childNodes.length === 1 ? a.childNodes[0] : undefined;
  if (!only || only.nodeName !== "#text") return false;
  const text = (only as DefaultTreeAdapterMap["textNode"]).value.trim();
  return (text === "¶" || text === "#" || text === "§") && (attr(a, "href") ?? "").startsWith("#");
}

function containsMain(el: Element): boolean {
  if (attr(el, "id") === "main" || el.tagName === "main") return true;
  return el.childNodes.some((c) => isElement(c) && containsMain(c));
}

/** camelCase key of a meta name: `og:locale:alternate` -> `ogLocaleAlternate`, `dc.terms.created` -> `dcTermsCreated`. */
export function metaKey(name: string): string {
  const parts = name.trim().split(/[:._-]+/).filter(Boolean);
  return parts.map((p, i) => (i === 0 ? p.toLowerCase() : p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())).join("");
}

const ARRAY_KEYS = new Set(["ogLocaleAlternate"]);

function addMeta(meta: Record<string, string | string[]>, key: string, value: string): void {
  const existing = meta[key];
  if (ARRAY_KEYS.has(key)) meta[key] = [...(Array.isArray(existing) ? existing : existing ? [existing] : []), value];
  else if (existing === undefined) meta[key] = value;
  else meta[key] = [...(Array.isArray(existing) ? existing : [existing]), value];
}

function textOf(node: Node): string {
  if (node.nodeName === "#text") return (node as DefaultTreeAdapterMap["textNode"]).value;
  if ("childNodes" in node) return node.childNodes.map(textOf).join("");
  return "";
}

/** The INDEXED_TAGS elements (and elements with a role) of a parse5 tree in document order (template contents included). */
function indexTags(doc: ParentNode): Element[] {
  const out: Element[] = [];
  const stack: Node[] = [doc];
  while (stack.length) {
    const node = stack.pop() as Node;
    if (isElement(node) && (INDEXED_TAGS.has(node.tagName) || attr(node, "role") !== undefined)) out.push(node);
    if ("childNodes" in node) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i] as Node);
    const content = isElement(node) && node.tagName === "template" ? (node as DefaultTreeAdapterMap["template"]).content : undefined;
    if (content) stack.push(content);
  }
  return out;
}

export interface CleanOptions {
  onlyMainContent: boolean;
  /** CSS selectors: keep only these elements */
  includeTags?: string[];
  /** CSS selectors: remove these elements */
  excludeTags?: string[];
  /** drop images inlined as data: URLs (default true) */
  removeBase64Images?: boolean;
  /** onlyMainContent: the rules of main-content.ts after the removal list (default true; false in the benchmark's comparison) */
  scoring?: boolean;
}

/** Which parser builds the tree: the fast one (default) or parse5's full HTML5 algorithm (reference in tests). */
export type HtmlParser = "fast" | "parse5";

export function processHtml(source: string, pageUrl: string, opts: CleanOptions, parser: HtmlParser = "fast", beforeClean?: (doc: ParentNode) => void): HtmlExtract {
  let doc: ParentNode;
  let indexed: Element[];
  if (parser === "fast") ({ doc, indexed } = parseHtmlIndexed(source));
  else indexed = indexTags((doc = parse(source)));
  // the page as parsed, before cleaning changes it (a page analyzer, e.g. the rules provider's evidence)
  beforeClean?.(doc);
  const metadata: Record<string, string | string[]> = {};
  const links: string[] = [];
  let base = pageUrl;
  let body: Element | undefined;
  let title: string | undefined;
  /** href as written -> absolute URL (fragment kept) and crawlable link (or null); one URL parse per distinct href */
  let hrefs = new HrefResolver(pageUrl);

  /** main / article / role elements, for main-content scoring */
  const candidates: Element[] = [];

  // pass 1: metadata, base, links, body, landmark candidates (over the elements the parser listed, in document order)
  for (const node of indexed) {
    switch (node.tagName) {
      case "html": {
        const lang = attr(node, "lang");
        if (lang) metadata.language = lang;
        break;
      }
      case "title":
        if (title === undefined) title = textOf(node).trim();
        break;
      case "base": {
        const href = attr(node, "href");
        const resolved = href ? resolveLink(href, pageUrl) : null;
        if (resolved) {
          base = resolved;
          hrefs = new HrefResolver(base);
        }
        break;
      }
      case "meta": {
        const name = attr(node, "name") ?? attr(node, "property") ?? attr(node, "itemprop");
        const content = attr(node, "content");
        if (attr(node, "http-equiv")?.toLowerCase() === "refresh" && content) {
          // <meta http-equiv="refresh" content="0; url=/next">: the target is a link of this page
          const target = /url\s*=\s*['"]?([^'"]+)/i.exec(content)?.[1];
          const resolved = target ? resolveLink(target, base) : null;
          if (resolved) links.push(resolved);
        }
        if (name && content !== undefined) addMeta(metadata, metaKey(name), content);
        break;
      }
      case "link": {
        const rel = attr(node, "rel")?.toLowerCase() ?? "";
        const href = attr(node, "href");
        if (href && /\bicon\b/.test(rel) && !metadata.favicon) metadata.favicon = resolveLink(href, base) ?? href;
        break;
      }
      case "a": {
        const href = attr(node, "href");
        if (!href) break;
        // pages repeat their links (menus, "next"/"prev"): resolve each distinct href once
        // every in-page anchor (#x) is the same link: the page itself
        const link = hrefs.link(href.charCodeAt(0) === 35 ? "#" : href);
        if (link) links.push(link);
        break;
      }
      case "body":
        body ??= node;
        break;
      default:
        candidates.push(node); // main, article, or an element with a role
    }
  }
  if (title !== undefined) metadata.title = title;

  // pass 2: clean the body in place
  const root: ParentNode = body ?? doc;
  const cleaning: Cleaning = {
    onlyMainContent: opts.onlyMainContent,
    exclude: opts.excludeTags?.length ? parseSelector(opts.excludeTags.join(",")) : null,
    removeBase64Images: opts.removeBase64Images ?? true,
    scoring: opts.scoring ?? true,
    images: [],
    hrefs,
  };
  let cleaned: ParentNode;
  let pruned = false;
  if (opts.includeTags?.length) {
    const picked = pick(root, parseSelector(opts.includeTags.join(",")), []);
    // each included element is cleaned as the only child of a holder (it may itself be excluded)
    const kept = picked.flatMap((el) => {
      const holder = { nodeName: "#document-fragment", childNodes: [el] } as unknown as ParentNode;
      clean(holder, cleaning, []);
      return holder.childNodes;
    });
    cleaned = { nodeName: "#document-fragment", childNodes: kept } as unknown as ParentNode;
  } else {
    clean(root, cleaning, []);
    cleaned = root;
    if (opts.onlyMainContent && opts.scoring !== false) {
      const focused = focusMainContent(root, landmarks(root, candidates));
      cleaned = focused.root;
      pruned = focused.pruned;
    }
  }
  const final = cleaned;
  // after main-content pruning the images are those of what was kept
  const images = () => [...new Set(pruned ? imageSources(final) : cleaning.images)];
  return { metadata, links: [...new Set(links)], images, root: final, html: () => serialize(final).trim() };
}

/** An element the cleaner dropped (its subtree went with it). */
interface Dropped {
  dropped?: boolean;
}

/**
 * The outermost main (or role=main) and article elements still in the cleaned tree under `root`, in document order,
 * from the candidates the parser listed (as a walk of the cleaned tree would find them).
 */
function landmarks(root: ParentNode, candidates: Element[]): Landmarks {
  const found: Landmarks = { mains: [], articles: [] };
  for (const el of candidates) {
    const kind = landmarkOf(el);
    if (!kind) continue;
    const list = kind === "main" ? found.mains : found.articles;
    let attached = false;
    for (let n: Element | ParentNode = el; ; ) {
      if ((n as Dropped).dropped) break;
      const parent = (n as Element).parentNode as ParentNode | null;
      if (!parent) break;
      if (parent === root) {
        attached = true;
        break;
      }
      if (list.includes(parent as Element)) break; // inside one already listed: not outermost
      n = parent;
    }
    if (attached) list.push(el);
  }
  return found;
}

interface Cleaning {
  onlyMainContent: boolean;
  exclude: Selector | null;
  removeBase64Images: boolean;
  scoring: boolean;
  images: string[];
  /** href/src as written -> absolute (each distinct value resolved once, shared with the link pass) */
  hrefs: HrefResolver;
}

/** The outermost elements under `parent` that match `selector`. */
function pick(parent: ParentNode, selector: Selector, ancestors: Element[]): Element[] {
  const out: Element[] = [];
  for (const child of parent.childNodes) {
    if (!isElement(child)) continue;
    if (matches(child, ancestors, selector)) out.push(child);
    else {
      ancestors.push(child);
      out.push(...pick(child, selector, ancestors));
      ancestors.pop();
    }
  }
  return out;
}

function clean(parent: ParentNode, c: Cleaning, ancestors: Element[]): void {
  const children = parent.childNodes;
  let kept: Node[] | null = null; // copied only once a child is dropped
  for (let i = 0; i < children.length; i++) {
    const child = children[i] as Node;
    if (keep(child, c, ancestors)) kept?.push(child);
    else {
      kept ??= children.slice(0, i);
      if (isElement(child)) {
        uncount(child); // main-content scoring reads the counts of what is left
        (child as Dropped).dropped = true;
      }
    }
  }
  if (kept) parent.childNodes = kept as typeof children;
}

/** Cleans one child in place; false when it goes. */
function keep(child: Node, c: Cleaning, ancestors: Element[]): boolean {
  if (child.nodeName === "#comment") return false;
  if (!isElement(child)) return true;
  if (ALWAYS_REMOVED.has(child.tagName)) return false;
  if (c.exclude && matches(child, ancestors, c.exclude)) return false;
  if (c.onlyMainContent && isChrome(child, c.scoring) && !containsMain(child)) return false;
  if (c.onlyMainContent && c.scoring && child.tagName === "a" && isPermalink(child)) return false;
  if (child.tagName === "img") {
    largestSrcset(child);
    const src = attr(child, "src") ?? "";
    if (src.startsWith("data:") && c.removeBase64Images) return false;
  }
  absolutize(child, c);
  if (child.tagName === "img") {
    const src = attr(child, "src");
    if (src && !src.startsWith("data:")) c.images.push(src);
  }
  ancestors.push(child);
  clean(child, c, ancestors);
  ancestors.pop();
  return true;
}

/** `srcset`: the candidate with the largest width (w) or density (x) descriptor becomes `src`. */
function largestSrcset(img: Element): void {
  const srcset = attr(img, "srcset");
  if (!srcset) return;
  let best: { url: string; size: number } | null = null;
  for (const part of srcset.split(/,\s+/)) {
    const [url, descriptor = "1x"] = part.trim().split(/\s+/);
    if (!url) continue;
    const size = parseFloat(descriptor) * (descriptor.endsWith("w") ? 1 : 10_000);
    if (!best || size > best.size) best = { url, size };
  }
  if (!best) return;
  const src = img.attrs.find((a) => a.name === "src");
  if (src) src.value = best.url;
  else img.attrs.push({ name: "src", value: best.url });
}

function absolutize(el: Element, c: Cleaning): void {
  if (el.tagName !== "a" && el.tagName !== "img" && el.tagName !== "source") return;
  for (const a of el.attrs) {
    if ((a.name === "href" && el.tagName === "a") || (a.name === "src" && (el.tagName === "img" || el.tagName === "source"))) {
      if (a.value.startsWith("#") || a.value.startsWith("data:")) continue;
      a.value = c.hrefs.resolve(a.value).absolute;
    }
  }
}
