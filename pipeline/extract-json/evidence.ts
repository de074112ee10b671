// What a page states, gathered once per page for the rules provider: JSON-LD and microdata/RDFa entities, <meta> and
// OpenGraph values, tables, definition lists, "label: value" lines and headings with their sections, each with
// where it came from (CSS path or JSON-LD path) so that every extracted field can name its source.
import { attr, childElements, cssPath, elements, textOf, type Element, type ParentNode } from "./dom.ts";
import { parseJsonText } from "../runtime/json-depth.ts";

/** `og:locale:alternate` -> `ogLocaleAlternate` (as document metadata names them) */
function metaKey(name: string): string {
  const parts = name.trim().split(/[:._-]+/).filter(Boolean);
  return parts.map((p, i) => (i === 0 ? p.toLowerCase() : p.charAt(0).toUpperCase() + p.slice(1).toLowerCase())).join("");
}

export type SourceKind = "json-ld" | "microdata" | "rdfa" | "meta" | "table" | "dl" | "label" | "heading";

export interface Source {
  kind: SourceKind;
  /** CSS path of the element, or the JSON-LD path (`jsonld[0].offers.price`) */
  path: string;
  /** the text (or JSON value) the field was read from */
  text: string;
  /** tables: the cell */
  cell?: { table: number; row: number; column: string };
}

/** A label and its value, as the page states it. */
export interface Field {
  label: string;
  value: unknown;
  source: Source;
}

/** A structured-data item (JSON-LD object, microdata/RDFa itemscope). */
export interface Entity {
  types: string[];
  data: Record<string, unknown>;
  kind: "json-ld" | "microdata" | "rdfa";
  path: string;
}

export interface Table {
  index: number;
  headers: string[];
  rows: { cells: string[]; els: Element[] }[];
  /** caption, summary attribute and the nearest title before it */
  caption: string;
}

export interface DefinitionItem {
  /** the term up to its parameter list: `json.dump(obj, fp)` -> `json.dump` */
  name: string;
  term: string;
  /** the class attribute of the list (Sphinx: `py function`) */
  listClass: string;
  definition: string;
  id?: string;
  termEl: Element;
  definitionEl: Element;
}

export interface Evidence {
  entities: Entity[];
  /** meta, dl pairs, two-column tables, label: value lines, headings: best kinds first */
  fields: Field[];
  tables: Table[];
  definitions: DefinitionItem[];
}

/** A source whose CSS path is computed only when it is read (most evidence is never used). */
function at(kind: SourceKind, el: Element, text: string, cell?: Source["cell"]): Source {
  let path: string | undefined;
  return { kind, get path() { return (path ??= cssPath(el)); }, text, ...(cell ? { cell } : {}) } as Source;
}

/** the keyword API docs put before a signature's name (Sphinx: `class json.JSONEncoder`, `exception ...`) */
const SIGNATURE_KEYWORD = /^(?:(?:async|abstract|abstractmethod|classmethod|staticmethod|static|final|property|class|exception|method|function|def|coroutine)\s+)+/;

const LABEL_LINE = /^([^:\n]{1,48}?)\s*:\s+(\S.{0,400})$/s;

function jsonLdEntities(all: Element[], out: Entity[]): void {
  let n = 0;
  for (const el of all) {
    if (el.tagName !== "script" || !/ld\+json/i.test(attr(el, "type") ?? "")) continue;
    const raw = el.childNodes.map((c) => ("value" in c ? String(c.value) : "")).join("");
    let parsed: unknown;
    try {
      parsed = parseJsonText(raw); // a block nested deeper than MAX_JSON_DEPTH is refused unparsed (no recursion below)
    } catch {
      n++;
      continue; // a broken or too deep JSON-LD block states nothing
    }
    const base = `jsonld[${n++}]`;
    const add = (v: unknown, path: string): void => {
      if (Array.isArray(v)) v.forEach((x, i) => add(x, `${path}[${i}]`));
      else if (v && typeof v === "object") {
        const obj = v as Record<string, unknown>;
        if (Array.isArray(obj["@graph"])) add(obj["@graph"], `${path}["@graph"]`);
        else out.push({ types: [obj["@type"]].flat().map(String).filter((t) => t !== "undefined"), data: obj, kind: "json-ld", path });
      }
    };
    add(parsed, base);
  }
}

function itemValue(el: Element): string {
  const v = attr(el, "content") ?? (el.tagName === "a" || el.tagName === "link" ? attr(el, "href") : undefined)
    ?? (el.tagName === "img" ? attr(el, "src") : undefined) ?? (el.tagName === "time" ? attr(el, "datetime") : undefined)
    ?? (el.tagName === "meta" ? attr(el, "content") : undefined);
  return v ?? textOf(el);
}

/** microdata (itemscope/itemprop) and RDFa (typeof/property) items, nested items as nested objects */
function scopedItems(all: Element[], out: Entity[]): void {
  const build = (scope: Element, kind: "microdata" | "rdfa"): Record<string, unknown> => {
    const data: Record<string, unknown> = {};
    const propAttr = kind === "microdata" ? "itemprop" : "property";
    const visit = (el: Element): void => {
      for (const c of childElements(el)) {
        const prop = attr(c, propAttr);
        const nested = kind === "microdata" ? attr(c, "itemscope") !== undefined : attr(c, "typeof") !== undefined;
        if (prop) {
          const value = nested ? build(c, kind) : itemValue(c);
          for (const name of prop.split(/\s+/).filter(Boolean).map((p) => p.replace(/^.*[:/#]/, ""))) {
            const prev = data[name];
            data[name] = prev === undefined ? value : [prev, value].flat();
          }
        }
        if (!nested) visit(c);
      }
    };
    visit(scope);
    return data;
  };
  for (const el of all) {
    if (attr(el, "itemscope") !== undefined && attr(el, "itemprop") === undefined) {
      out.push({ types: (attr(el, "itemtype") ?? "").split(/\s+/).filter(Boolean).map((t) => t.replace(/^.*\//, "")), data: build(el, "microdata"), kind: "microdata", path: cssPath(el) });
    } else if (attr(el, "typeof") !== undefined && attr(el, "property") === undefined) {
      out.push({ types: (attr(el, "typeof") ?? "").split(/\s+/).filter(Boolean).map((t) => t.replace(/^.*[:/]/, "")), data: build(el, "rdfa"), kind: "rdfa", path: cssPath(el) });
    }
  }
}

function tableOf(el: Element, index: number): Table {
  const rows: Element[] = [];
  const collect = (p: Element): void => {
    for (const c of childElements(p)) {
      if (c.tagName === "tr") rows.push(c);
      else if (c.tagName === "thead" || c.tagName === "tbody" || c.tagName === "tfoot") collect(c);
    }
  };
  collect(el);
  const cellsOf = (tr: Element) => childElements(tr).filter((c) => c.tagName === "td" || c.tagName === "th");
  let headers: string[] = [];
  let body = rows;
  const first = rows[0];
  if (first) {
    const cells = cellsOf(first);
    const inHead = first.parentNode && (first.parentNode as Element).tagName === "thead";
    if (inHead || (cells.length > 1 && cells.every((c) => c.tagName === "th"))) {
      headers = cells.map(textOf);
      body = rows.slice(1);
    }
  }
  const captionEl = childElements(el).find((c) => c.tagName === "caption");
  let caption = [captionEl ? textOf(captionEl) : "", attr(el, "summary") ?? ""].join(" ");
  // DocBook / Sphinx: the title sits before the table's wrapper
  for (let p = el.parentNode as Element | null, depth = 0; p && depth < 3 && "tagName" in p; p = p.parentNode as Element | null, depth++) {
    const title = childElements(p).find((c) => /(^|\s)(title|caption)(\s|$)/.test(attr(c, "class") ?? ""));
    if (title) {
      caption += " " + textOf(title);
      break;
    }
  }
  return {
    index,
    headers,
    rows: body.map((tr) => {
      const cells = cellsOf(tr);
      return { cells: cells.map(textOf), els: cells };
    }),
    caption: caption.trim(),
  };
}

/** The text of a heading's section: the elements after it up to the next heading of the same or a higher level. */
function sectionText(h: Element): { text: string; el: Element } | undefined {
  const level = Number(h.tagName[1]);
  const parent = h.parentNode as ParentNode;
  const siblings = childElements(parent);
  for (const s of siblings.slice(siblings.indexOf(h) + 1)) {
    const m = /^h([1-6])$/.exec(s.tagName);
    if (m && Number(m[1]) <= level) return undefined;
    const text = textOf(s);
    if (text) return { text, el: s };
  }
  return undefined;
}

function insideCode(el: Element): boolean {
  for (let p: Element | null = el; p && "tagName" in p; p = p.parentNode as Element | null) if (p.tagName === "pre" || p.tagName === "code") return true;
  return false;
}

export function gatherEvidence(doc: ParentNode): Evidence {
  const all = elements(doc);
  const entities: Entity[] = [];
  jsonLdEntities(all, entities);
  scopedItems(all, entities);
  const meta: Field[] = [];
  const pairs: Field[] = [];
  const lines: Field[] = [];
  const headings: Field[] = [];
  const docTitle: Field[] = [];
  const tables: Table[] = [];
  const definitions: DefinitionItem[] = [];
  for (const el of all) {
    switch (el.tagName) {
      case "meta": {
        const name = attr(el, "property") ?? attr(el, "name") ?? attr(el, "itemprop");
        const content = attr(el, "content");
        if (name && content && attr(el, "itemprop") === undefined) {
          const label = name.replace(/^(og|twitter|article|product|book|profile|music|video|dc|dcterms):/i, "").replace(/^(dc|dcterms)\./i, "");
          meta.push({ label, value: content, source: { kind: "meta", path: `meta[${attr(el, "property") ? "property" : "name"}="${name}"]`, text: content } });
          if (metaKey(name) !== label) meta.push({ label: metaKey(name), value: content, source: { kind: "meta", path: `meta[${attr(el, "property") ? "property" : "name"}="${name}"]`, text: content } });
        }
        break;
      }
      case "title": {
        const t = textOf(el);
        if (t) docTitle.push({ label: "title", value: t, source: { kind: "meta", path: "title", text: t } });
        break;
      }
      case "table": {
        const t = tableOf(el, tables.length);
        tables.push(t);
        if (t.headers.length === 0) {
          t.rows.forEach((r, row) => {
            if (r.cells.length === 2 && r.cells[0] && r.cells[1]) {
              pairs.push({ label: r.cells[0].replace(/:$/, ""), value: r.cells[1], source: at("table", r.els[1] as Element, r.cells[1], { table: t.index, row, column: r.cells[0] }) });
            }
          });
        }
        break;
      }
      case "dt": {
        let dd = el.parentNode ? childElements(el.parentNode as ParentNode) : [];
        dd = dd.slice(dd.indexOf(el) + 1);
        const next = dd.find((c) => c.tagName === "dt" || c.tagName === "dd");
        if (next?.tagName === "dd") {
          const term = textOf(el);
          // the definition's first paragraph (a definition is often a whole section)
          const firstP = childElements(next).find((c) => c.tagName === "p");
          const definition = textOf(firstP ?? next);
          const id = attr(el, "id");
          const listClass = attr(el.parentNode as Element, "class") ?? "";
          definitions.push({ name: term.replace(/\s*\(.*$/s, "").replace(SIGNATURE_KEYWORD, ""), term, listClass, definition, ...(id ? { id } : {}), termEl: el, definitionEl: firstP ?? next });
          if (term.length <= 60) pairs.push({ label: term.replace(/:$/, ""), value: definition, source: at("dl", next, definition) });
        }
        break;
      }
      case "p": case "li": case "div": case "td": {
        if (el.tagName === "div" && childElements(el).some((c) => /^(div|p|ul|ol|table|dl|section)$/.test(c.tagName))) break;
        if (insideCode(el)) break;
        const text = textOf(el);
        const m = text.length < 450 ? LABEL_LINE.exec(text) : null;
        if (m && /^[\p{L}][\p{L}\p{N} ()/&'.-]*$/u.test(m[1] as string) && !/^https?$/i.test(m[1] as string)) lines.push({ label: m[1] as string, value: (m[2] as string).trim(), source: at("label", el, text) });
        break;
      }
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": {
        const text = textOf(el).replace(/^[\d.]+\s+/, "");
        if (el.tagName === "h1") headings.push({ label: "title", value: text, source: at("heading", el, text) });
        const section = sectionText(el);
        if (section) headings.push({ label: text, value: section.text, source: at("heading", section.el, section.text) });
        break;
      }
    }
  }
  return { entities, fields: [...pairs, ...lines, ...meta, ...headings, ...docTitle], tables, definitions };
}
