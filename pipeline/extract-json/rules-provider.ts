// The rules provider: schema-guided extraction from what the page states (no network, no model). Each schema
// property is matched to the page's labels (labels.ts) in the evidence (evidence.ts); arrays of objects come from
// tables (header -> property, row -> object), definition lists, JSON-LD arrays and repeated items. A property with
// no evidence is left out (null when the schema requires it); every value carries its source.
import type { DefinitionItem, Entity, Evidence, Field, Source, Table } from "./evidence.ts";
import { labelScore, MATCH_THRESHOLD } from "./labels.ts";
import { cssPath, type Element } from "./dom.ts";
import { coerce, kindOf, pointer, resolve, type JsonSchema } from "./json-schema.ts";

export type Sources = Record<string, Source>;

interface Scope {
  /** the structured item being read (JSON-LD object, microdata item), if any */
  entity?: { data: Record<string, unknown>; path: string; kind: Entity["kind"] };
  /** false inside an array item: page-wide fields belong to the page, not to each item */
  pageFields: boolean;
}

interface Candidate {
  score: number;
  value: unknown;
  source: Source;
}

const textOfValue = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));

export class RulesExtractor {
  readonly sources: Sources = {};
  private readonly root: JsonSchema;
  private readonly ev: Evidence;

  constructor(ev: Evidence, root: JsonSchema) {
    this.ev = ev;
    this.root = root;
  }

  /** The whole result for the root schema. */
  run(): unknown {
    const root = resolve(this.root, this.root);
    const kind = kindOf(root);
    if (kind === "array") return this.array("items", root, "", { pageFields: true }) ?? [];
    if (kind !== "object") return this.scalar("value", root, "", { pageFields: true }) ?? null;
    return this.object(root, "", { entity: this.mainEntity(root), pageFields: true }) ?? Object.fromEntries((root.required ?? []).map((k) => [k, null]));
  }

  /** The structured item that states most of the schema's properties. */
  private mainEntity(schema: JsonSchema): Scope["entity"] {
    let best: Entity | undefined;
    let bestScore = 0;
    const props = Object.entries(schema.properties ?? {});
    for (const e of this.ev.entities) {
      let score = 0;
      for (const [name, sub] of props) {
        const s = resolve(sub, this.root);
        if (this.entityCandidates(name, s, { data: e.data, path: e.path, kind: e.kind }).length > 0) score++;
      }
      if (score > bestScore) [best, bestScore] = [e, score];
    }
    return best ? { data: best.data, path: best.path, kind: best.kind } : undefined;
  }

  private object(schema: JsonSchema, ptr: string, scope: Scope): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    let found = 0;
    for (const [name, raw] of Object.entries(schema.properties ?? {})) {
      const sub = resolve(raw, this.root);
      const value = this.value(name, sub, pointer(ptr, name), scope);
      if (value !== undefined) {
        out[name] = value;
        found++;
      }
    }
    if (found === 0) return undefined;
    for (const name of schema.required ?? []) if (!(name in out)) out[name] = null;
    return out;
  }

  private value(name: string, sub: JsonSchema, ptr: string, scope: Scope): unknown {
    const kind = kindOf(sub);
    if (kind === "array") return this.array(name, sub, ptr, scope);
    if (kind === "object") {
      const nested = scope.entity ? this.entityCandidates(name, sub, scope.entity).find((c) => c.value && typeof c.value === "object" && !Array.isArray(c.value)) : undefined;
      if (nested) return this.object(sub, ptr, { entity: { data: nested.value as Record<string, unknown>, path: nested.source.path, kind: scope.entity?.kind ?? "json-ld" }, pageFields: false });
      return this.object(sub, ptr, scope);
    }
    return this.scalar(name, sub, ptr, scope);
  }

  /** Values of the scope's item under a key that names the property (one level of nesting looked into). */
  private entityCandidates(name: string, sub: JsonSchema, entity: NonNullable<Scope["entity"]>): Candidate[] {
    const out: Candidate[] = [];
    const visit = (data: Record<string, unknown>, path: string, depth: number): void => {
      for (const [key, value] of Object.entries(data)) {
        if (key.startsWith("@")) continue;
        const score = labelScore(name, key, sub.description) - depth * 0.05;
        const p = entity.kind === "json-ld" ? `${path}.${key}` : `${path} [${entity.kind === "microdata" ? "itemprop" : "property"}=${key}]`;
        if (score >= MATCH_THRESHOLD) out.push({ score, value, source: { kind: entity.kind, path: p, text: textOfValue(value) } });
        const inner = Array.isArray(value) ? value[0] : value;
        if (depth === 0 && inner && typeof inner === "object") visit(inner as Record<string, unknown>, Array.isArray(value) ? `${p}[0]` : p, 1);
      }
    };
    visit(entity.data, entity.path, 0);
    return out.sort((a, b) => b.score - a.score);
  }

  private fieldCandidates(name: string, sub: JsonSchema): Candidate[] {
    const out: Candidate[] = [];
    this.ev.fields.forEach((f: Field, i) => {
      const score = labelScore(name, f.label, sub.description);
      // earlier kinds win ties (pairs, lines, meta, headings, <title>)
      if (score >= MATCH_THRESHOLD) out.push({ score: score - i * 1e-6, value: f.value, source: f.source });
    });
    return out.sort((a, b) => b.score - a.score);
  }

  private scalar(name: string, sub: JsonSchema, ptr: string, scope: Scope): unknown {
    const candidates = [
      ...(scope.entity ? this.entityCandidates(name, sub, scope.entity) : []),
      ...(scope.pageFields ? this.fieldCandidates(name, sub).map((c) => ({ ...c, score: c.score - 0.01 })) : []),
    ].sort((a, b) => b.score - a.score);
    for (const c of candidates) {
      const v = coerce(c.value, sub);
      if (v !== undefined) {
        this.sources[ptr] = c.source;
        return v;
      }
    }
    return undefined;
  }

  private array(name: string, sub: JsonSchema, ptr: string, scope: Scope): unknown[] | undefined {
    const items = resolve(Array.isArray(sub.items) ? sub.items[0] : sub.items, this.root);
    const itemKind = kindOf(items);
    // 1. a structured item's list under that name
    if (scope.entity) {
      for (const c of this.entityCandidates(name, sub, scope.entity)) {
        const list = Array.isArray(c.value) ? c.value : [c.value];
        const out = this.fromValues(list, items, itemKind, ptr, c.source);
        if (out.length > 0) return out;
      }
    }
    if (!scope.pageFields) return undefined;
    if (itemKind === "object") {
      // 2. repeated structured items whose type names the property (Product for "products")
      const typed = this.ev.entities.filter((e) => e.types.some((t) => labelScore(name, t, sub.description) >= MATCH_THRESHOLD || labelScore(items.title ?? "", t) >= 0.9));
      if (typed.length > 0) {
        const out = typed.map((e, i) => this.object(items, pointer(ptr, i), { entity: { data: e.data, path: e.path, kind: e.kind }, pageFields: false })).filter((x) => x !== undefined);
        if (out.length > 0) return out;
      }
      // 3. a table or the definition lists, whichever states more of the item's properties
      const table = this.bestTable(name, sub, items);
      const defs = this.definitionColumns(items);
      if (table && (!defs || table.matched >= defs.matched)) return this.fromTable(table.table, table.columns, items, ptr);
      if (defs) return this.fromDefinitions(name, defs.columns, items, ptr);
      return undefined;
    }
    // scalars: a table column named like the property, else a page field's list (keywords: a, b, c)
    const table = this.bestTable(name, sub, { type: "object", properties: { [name]: items } });
    if (table) {
      const col = table.columns[name] as number;
      return table.table.rows.flatMap((r, row) => {
        const v = coerce(r.cells[col], items);
        if (v === undefined) return [];
        this.sources[pointer(ptr, row)] = { kind: "table", path: cssPath(r.els[col] as Element), text: r.cells[col] as string, cell: { table: table.table.index, row, column: table.table.headers[col] as string } };
        return [v];
      });
    }
    const field = this.fieldCandidates(name, sub)[0];
    if (field) {
      const parts = Array.isArray(field.value) ? field.value : String(field.value).split(/\s*[,;]\s*/);
      const out = this.fromValues(parts, items, itemKind, ptr, field.source);
      if (out.length > 0) return out;
    }
    return undefined;
  }

  private fromValues(list: unknown[], items: JsonSchema, itemKind: string, ptr: string, source: Source): unknown[] {
    const out: unknown[] = [];
    list.forEach((v, i) => {
      const p = pointer(ptr, out.length);
      if (itemKind === "object") {
        if (!v || typeof v !== "object") return;
        const o = this.object(items, p, { entity: { data: v as Record<string, unknown>, path: `${source.path}[${i}]`, kind: source.kind === "microdata" || source.kind === "rdfa" ? source.kind : "json-ld" }, pageFields: false });
        if (o !== undefined) out.push(o);
      } else {
        const c = coerce(v, items);
        if (c === undefined) return;
        this.sources[p] = { ...source, text: textOfValue(v) };
        out.push(c);
      }
    });
    return out;
  }

  /** The table whose headers state most of the item's properties (its caption naming the property breaks ties). */
  private bestTable(name: string, sub: JsonSchema, items: JsonSchema): { table: Table; columns: Record<string, number>; matched: number } | undefined {
    let best: { table: Table; columns: Record<string, number>; matched: number; score: number } | undefined;
    const props = Object.entries(items.properties ?? {}).map(([k, s]) => [k, resolve(s, this.root)] as const);
    for (const table of this.ev.tables) {
      if (table.headers.length < 2 || table.rows.length === 0) continue;
      const columns: Record<string, number> = {};
      let score = 0;
      for (const [prop, ps] of props) {
        let bestCol = -1;
        let bestScore = 0;
        table.headers.forEach((h, i) => {
          const s = labelScore(prop, h, ps.description);
          if (s >= MATCH_THRESHOLD && s > bestScore) [bestCol, bestScore] = [i, s];
        });
        if (bestCol >= 0) {
          columns[prop] = bestCol;
          score += bestScore;
        }
      }
      const matched = Object.keys(columns).length;
      if (matched === 0 || (matched < 2 && props.length >= 2)) continue;
      const caption = table.caption ? Math.max(labelScore(name, table.caption, sub.description), captionMentions(table.caption, name) ? 0.5 : 0) : 0;
      score += caption;
      if (!best || score > best.score) best = { table, columns, matched, score };
    }
    return best;
  }

  private fromTable(table: Table, columns: Record<string, number>, items: JsonSchema, ptr: string): unknown[] {
    const out: unknown[] = [];
    for (const [row, r] of table.rows.entries()) {
      const obj: Record<string, unknown> = {};
      const rowSources: Sources = {};
      const p = pointer(ptr, out.length);
      for (const [prop, col] of Object.entries(columns)) {
        const text = r.cells[col];
        if (text === undefined || text === "") continue;
        const v = coerce(text, resolve(items.properties?.[prop], this.root));
        if (v === undefined) continue;
        obj[prop] = v;
        rowSources[pointer(p, prop)] = { kind: "table", path: cssPath(r.els[col] as Element), text, cell: { table: table.index, row, column: table.headers[col] as string } };
      }
      if (Object.keys(obj).length === 0) continue;
      for (const name of items.required ?? []) if (!(name in obj)) obj[name] = null;
      Object.assign(this.sources, rowSources);
      out.push(obj);
    }
    return out;
  }

  /** Which item property reads a definition list's term, definition and the term's id. */
  private definitionColumns(items: JsonSchema): { columns: Record<string, keyof DefinitionItem>; matched: number } | undefined {
    if (this.ev.definitions.length === 0) return undefined;
    const roles: [keyof DefinitionItem, string[]][] = [["name", ["name", "title", "key", "word", "function", "method", "command", "option"]], ["term", ["term", "signature", "syntax"]], ["definition", ["definition", "description", "summary", "value", "meaning", "text"]], ["id", ["id", "anchor"]]];
    const columns: Record<string, keyof DefinitionItem> = {};
    for (const [prop, raw] of Object.entries(items.properties ?? {})) {
      const ps = resolve(raw, this.root);
      const role = roles.find(([, labels]) => labels.some((l) => labelScore(prop, l, ps.description) >= 0.9));
      if (role && !Object.values(columns).includes(role[0])) columns[prop] = role[0];
    }
    const matched = Object.keys(columns).length;
    return matched > 0 ? { columns, matched } : undefined;
  }

  private fromDefinitions(name: string, columns: Record<string, keyof DefinitionItem>, items: JsonSchema, ptr: string): unknown[] {
    const out: unknown[] = [];
    // lists whose class names the property (Sphinx `dl.py.function` for "functions") when there are such lists
    const named = this.ev.definitions.filter((d) => d.listClass.split(/\s+/).some((c) => labelScore(name, c) >= 0.9));
    for (const d of named.length > 0 ? named : this.ev.definitions) {
      const obj: Record<string, unknown> = {};
      const p = pointer(ptr, out.length);
      for (const [prop, role] of Object.entries(columns)) {
        const text = d[role];
        const v = text === undefined || text === "" ? undefined : coerce(text, resolve(items.properties?.[prop], this.root));
        if (v === undefined) continue;
        obj[prop] = v;
        this.sources[pointer(p, prop)] = { kind: "dl", path: cssPath(role === "definition" ? d.definitionEl : d.termEl), text: String(text) };
      }
      if (Object.keys(obj).length === 0) continue;
      for (const name of items.required ?? []) if (!(name in obj)) obj[name] = null;
      out.push(obj);
    }
    return out;
  }
}

function captionMentions(caption: string, name: string): boolean {
  const words = new Set(caption.toLowerCase().split(/[^a-z0-9]+/).map((w) => w.replace(/s$/, "")));
  return name.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).every((w) => words.has(w.replace(/s$/, "")));
}

/** Schema-guided extraction from the gathered evidence: the value and the source of every field (JSON pointer -> source). */
export function extractWithRules(ev: Evidence, schema: JsonSchema): { data: unknown; sources: Sources } {
  const x = new RulesExtractor(ev, schema);
  const data = x.run();
  return { data, sources: x.sources };
}

