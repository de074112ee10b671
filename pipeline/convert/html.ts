// HTML processing with parse5: metadata, links (from the raw HTML), and the cleaned HTML of the page.
import { parse, serialize, type DefaultTreeAdapterMap } from "parse5";
import { resolveLink } from "../frontier/normalize-url.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

export interface HtmlExtract {
  metadata: Record<string, string | string[]>;
  links: string[];
  /** Cleaned HTML of the body (scripts, styles and — with onlyMainContent — page chrome removed; URLs absolute). */
  html: string;
}

const ALWAYS_REMOVED = new Set(["script", "style", "noscript", "meta", "head", "template", "link"]);
const CHROME_TAGS = new Set(["header", "footer", "nav", "aside"]);
const CHROME_CLASSES = new Set([
  "header", "top", "navbar", "footer", "bottom", "sidebar", "side", "aside", "modal", "popup", "overlay", "ad", "ads", "advert",
  "lang-selector", "language", "social", "social-media", "social-links", "menu", "navigation", "breadcrumbs", "share", "widget", "cookie",
]);
const CHROME_IDS = new Set(["header", "footer", "sidebar", "modal", "ad", "language-selector", "social", "nav", "breadcrumbs", "share", "widget", "cookie"]);

const isElement = (n: Node): n is Element => "tagName" in n;
const attr = (el: Element, name: string): string | undefined => el.attrs.find((a) => a.name === name)?.value;

function isChrome(el: Element): boolean {
  if (CHROME_TAGS.has(el.tagName)) return true;
  const id = attr(el, "id")?.toLowerCase();
  if (id && CHROME_IDS.has(id)) return true;
  const classes = attr(el, "class")?.toLowerCase().split(/\s+/) ?? [];
  return classes.some((c) => CHROME_CLASSES.has(c));
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

export function processHtml(source: string, pageUrl: string, opts: { onlyMainContent: boolean }): HtmlExtract {
  const doc = parse(source);
  const metadata: Record<string, string | string[]> = {};
  const links: string[] = [];
  let base = pageUrl;
  let body: Element | undefined;
  let title: string | undefined;

  // pass 1: metadata, base, links, body
  const stack: Node[] = [doc];
  while (stack.length) {
    const node = stack.pop() as Node;
    if (!isElement(node)) {
      if ("childNodes" in node) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i] as Node);
      continue;
    }
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
        if (resolved) base = resolved;
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
        const resolved = href ? resolveLink(href, base) : null;
        if (resolved) links.push(resolved);
        break;
      }
      case "body":
        body ??= node;
        break;
    }
    for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i] as Node);
    if (node.tagName === "template") stack.push((node as DefaultTreeAdapterMap["template"]).content);
  }
  if (title !== undefined) metadata.title = title;

  // pass 2: clean the body in place
  const root: ParentNode = body ?? doc;
  clean(root, base, opts.onlyMainContent);
  return { metadata, links: [...new Set(links)], html: serialize(root).trim() };
}

function clean(parent: ParentNode, base: string, onlyMainContent: boolean): void {
  parent.childNodes = parent.childNodes.filter((child) => {
    if (child.nodeName === "#comment") return false;
    if (!isElement(child)) return true;
    if (ALWAYS_REMOVED.has(child.tagName)) return false;
    if (onlyMainContent && isChrome(child) && !containsMain(child)) return false;
    absolutize(child, base);
    clean(child, base, onlyMainContent);
    return true;
  });
}

function absolutize(el: Element, base: string): void {
  for (const a of el.attrs) {
    if ((a.name === "href" && el.tagName === "a") || (a.name === "src" && (el.tagName === "img" || el.tagName === "source"))) {
      if (a.value.startsWith("#") || a.value.startsWith("data:")) continue;
      try {
        a.value = new URL(a.value, base).href;
      } catch {
        // leave unparsable URLs as they are
      }
    }
  }
}
