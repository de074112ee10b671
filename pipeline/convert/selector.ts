// A small CSS selector matcher over parse5 elements, for includeTags / excludeTags: comma-separated lists of compound
// selectors (tag, #id, .class, [attr], [attr=value], *) joined by descendant (space) or child (>) combinators.
// Not supported (rejected with a clear error): pseudo-classes, sibling combinators, attribute operators other than =.
import type { DefaultTreeAdapterMap } from "parse5";

type Element = DefaultTreeAdapterMap["element"];

interface Compound {
  tag?: string;
  id?: string;
  classes: string[];
  attrs: { name: string; value?: string }[];
}

interface Step {
  compound: Compound;
  /** how this step relates to the previous one */
  combinator: " " | ">";
}

export type Selector = Step[][];

export class SelectorError extends Error {}

function parseCompound(text: string): Compound {
  const c: Compound = { classes: [], attrs: [] };
  const re = /([a-zA-Z][\w-]*|\*)|#([\w-]+)|\.([\w-]+)|\[\s*([\w-]+)\s*(?:=\s*(?:"([^"]*)"|'([^']*)'|([^\]\s]*)))?\s*\]/y;
  let i = 0;
  while (i < text.length) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m) throw new SelectorError(`unsupported selector syntax at "${text.slice(i)}"`);
    if (m[1] && m[1] !== "*") c.tag = m[1].toLowerCase();
    else if (m[2]) c.id = m[2];
    else if (m[3]) c.classes.push(m[3]);
    else if (m[4]) c.attrs.push({ name: m[4].toLowerCase(), value: m[5] ?? m[6] ?? m[7] });
    i = re.lastIndex;
  }
  return c;
}

export function parseSelector(text: string): Selector {
  return text.split(",").map((part) => {
    const tokens = part.trim().replace(/\s*>\s*/g, " > ").split(/\s+/).filter(Boolean);
    if (tokens.length === 0) throw new SelectorError(`empty selector in "${text}"`);
    const steps: Step[] = [];
    let combinator: " " | ">" = " ";
    for (const token of tokens) {
      if (token === ">") {
        combinator = ">";
        continue;
      }
      steps.push({ compound: parseCompound(token), combinator });
      combinator = " ";
    }
    return steps;
  });
}

const attr = (el: Element, name: string) => el.attrs.find((a) => a.name === name)?.value;

function matchesCompound(el: Element, c: Compound): boolean {
  if (c.tag && el.tagName !== c.tag) return false;
  if (c.id && attr(el, "id") !== c.id) return false;
  if (c.classes.length) {
    const classes = (attr(el, "class") ?? "").split(/\s+/);
    if (!c.classes.every((k) => classes.includes(k))) return false;
  }
  return c.attrs.every((a) => {
    const v = attr(el, a.name);
    return v !== undefined && (a.value === undefined || v === a.value);
  });
}

/** Does `el` (whose element ancestors are `ancestors`, nearest last) match the selector? */
export function matches(el: Element, ancestors: Element[], selector: Selector): boolean {
  return selector.some((steps) => matchSteps(el, ancestors, steps, steps.length - 1));
}

function matchSteps(el: Element, ancestors: Element[], steps: Step[], i: number): boolean {
  const step = steps[i] as Step;
  if (!matchesCompound(el, step.compound)) return false;
  if (i === 0) return true;
  if (step.combinator === ">") {
    const parent = ancestors[ancestors.length - 1];
    return parent !== undefined && matchSteps(parent, ancestors.slice(0, -1), steps, i - 1);
  }
  for (let a = ancestors.length - 1; a >= 0; a--) {
    if (matchSteps(ancestors[a] as Element, ancestors.slice(0, a), steps, i - 1)) return true;
  }
  return false;
}
