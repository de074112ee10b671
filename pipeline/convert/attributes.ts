// The attributes format (Firecrawl v2): for each { selector, attribute }, the attribute's values on every element of
// the page the selector matches, in document order. Deterministic (no LLM): the page as parsed, before cleaning (so
// onlyMainContent and excludeTags do not hide elements), with the same selector engine as includeTags / excludeTags.
import type { DefaultTreeAdapterMap } from "parse5";
import { matches, parseSelector, type Selector } from "./selector.ts";

type Node = DefaultTreeAdapterMap["node"];
type Element = DefaultTreeAdapterMap["element"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

export interface AttributeSpec {
  selector: string;
  attribute: string;
}

export interface AttributeValues extends AttributeSpec {
  values: string[];
}

/** At most this many values per selector: a selector such as `*` on a huge page stays bounded. */
export const MAX_ATTRIBUTE_VALUES = 10_000;

const isElement = (n: Node): n is Element => "tagName" in n;

export function attributeValues(doc: ParentNode, specs: readonly AttributeSpec[]): AttributeValues[] {
  const compiled: { selector: Selector; attribute: string; values: string[] }[] = specs.map((s) => ({ selector: parseSelector(s.selector), attribute: s.attribute.toLowerCase(), values: [] }));
  const ancestors: Element[] = [];
  // iterative depth-first walk (pages nest deeper than the stack allows a recursion)
  const stack: (Node | null)[] = [...[...doc.childNodes].reverse()];
  while (stack.length > 0) {
    const node = stack.pop() as Node | null;
    if (node === null) {
      ancestors.pop(); // the end of an element's children
      continue;
    }
    if (!isElement(node)) continue;
    for (const c of compiled) {
      if (c.values.length >= MAX_ATTRIBUTE_VALUES) continue;
      const value = node.attrs.find((a) => a.name === c.attribute)?.value;
      if (value !== undefined && matches(node, ancestors, c.selector)) c.values.push(value);
    }
    const children = node.tagName === "template" ? (node as unknown as { content: ParentNode }).content?.childNodes ?? [] : node.childNodes;
    ancestors.push(node);
    stack.push(null);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as Node);
  }
  return specs.map((s, i) => ({ selector: s.selector, attribute: s.attribute, values: (compiled[i] as { values: string[] }).values }));
}
