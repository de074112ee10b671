// Small read-only helpers over the parse5-shaped tree of pipeline/convert/parse-html.ts.
import type { DefaultTreeAdapterMap } from "parse5";

export type Node = DefaultTreeAdapterMap["node"];
export type Element = DefaultTreeAdapterMap["element"];
export type ParentNode = DefaultTreeAdapterMap["parentNode"];

export const isElement = (n: Node): n is Element => n.nodeName.charCodeAt(0) !== 35;

export function attr(el: Element, name: string): string | undefined {
  for (const a of el.attrs) if (a.name === name) return a.value;
  return undefined;
}

export const childElements = (el: ParentNode): Element[] => (el.childNodes as Node[]).filter(isElement);

/** Every element below `root` in document order. */
export function elements(root: ParentNode): Element[] {
  const out: Element[] = [];
  const stack: Node[] = [root as Node];
  while (stack.length) {
    const node = stack.pop() as Node;
    if (isElement(node)) out.push(node);
    if ("childNodes" in node) for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push(node.childNodes[i] as Node);
  }
  return out;
}

const SKIP_TEXT = new Set(["script", "style", "noscript", "template"]);

/** Text content, whitespace collapsed; permalink marks (¶) dropped. */
export function textOf(node: Node): string {
  const parts: string[] = [];
  const walk = (n: Node): void => {
    if (n.nodeName === "#text") parts.push((n as DefaultTreeAdapterMap["textNode"]).value);
    else if (isElement(n) && SKIP_TEXT.has(n.tagName)) return;
    else if ("childNodes" in n) {
      const block = isElement(n) && (n.tagName === "br" || n.tagName === "p" || n.tagName === "div" || n.tagName === "li");
      if (block) parts.push(" ");
      for (const c of n.childNodes) walk(c as Node);
      if (block) parts.push(" ");
    }
  };
  walk(node);
  return parts.join("").replace(/[¶§]/g, "").replace(/\s+/g, " ").trim();
}

/** A CSS path that selects `el`: from the nearest ancestor with an id (or html), `tag:nth-of-type(n)` steps. */
export function cssPath(el: Element): string {
  const steps: string[] = [];
  let cur: Element | null = el;
  while (cur && isElement(cur as Node)) {
    const id = attr(cur, "id");
    if (id && /^[A-Za-z][\w-]*$/.test(id)) {
      steps.unshift(`${cur.tagName}#${id}`);
      break;
    }
    const parent = cur.parentNode as ParentNode | null;
    if (!parent || !isElement(parent as Node)) {
      steps.unshift(cur.tagName);
      break;
    }
    const same = childElements(parent).filter((c) => c.tagName === (cur as Element).tagName);
    steps.unshift(same.length > 1 ? `${cur.tagName}:nth-of-type(${same.indexOf(cur) + 1})` : cur.tagName);
    cur = parent as Element;
  }
  return steps.join(" > ");
}
