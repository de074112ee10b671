// The few JSON Schema questions extraction asks: what type a (sub)schema wants, its local $refs, and turning a stated
// value into that type (a value that cannot be read as the type is no evidence).

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema | JsonSchema[];
  required?: string[];
  description?: string;
  title?: string;
  enum?: unknown[];
  $ref?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  [k: string]: unknown;
};

export type Kind = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null" | "any";

/** A `#/$defs/x` or `#/definitions/x` reference resolved against the root; other schemas unchanged. */
export function resolve(s: JsonSchema | undefined, root: JsonSchema): JsonSchema {
  let cur = s ?? {};
  for (let i = 0; i < 16 && typeof cur.$ref === "string"; i++) {
    const ref = cur.$ref;
    if (!ref.startsWith("#")) return {};
    let target: unknown = root;
    for (const part of ref.slice(1).split("/").filter(Boolean)) target = (target as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    cur = (target as JsonSchema) ?? {};
  }
  const alt = cur.anyOf ?? cur.oneOf;
  if (!cur.type && alt) {
    const first = alt.map((a) => resolve(a, root)).find((a) => kindOf(a) !== "null");
    if (first) return { ...first, ...(alt.some((a) => kindOf(resolve(a, root)) === "null") ? { nullable: true } : {}) };
  }
  return cur;
}

export function types(s: JsonSchema): string[] {
  return s.type === undefined ? [] : Array.isArray(s.type) ? s.type : [s.type];
}

export function kindOf(s: JsonSchema): Kind {
  const t = types(s).filter((x) => x !== "null");
  if (t.length > 0) return t[0] as Kind;
  if (types(s).includes("null")) return "null";
  if (s.properties) return "object";
  if (s.items) return "array";
  return "any";
}

export const allowsNull = (s: JsonSchema): boolean => types(s).includes("null") || s.nullable === true;

const NUMBER = /[-+−]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?/;

function scalarText(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) return scalarText(v[0]);
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    return scalarText(o.name ?? o["@value"] ?? o.value ?? o.url ?? o["@id"]);
  }
  const s = String(v).trim();
  return s === "" ? undefined : s;
}

/** A stated value as the schema's type, or undefined when it cannot be read as one. */
export function coerce(v: unknown, s: JsonSchema): unknown {
  const kind = kindOf(s);
  if (kind === "number" || kind === "integer") {
    if (typeof v === "number") return kind === "integer" && !Number.isInteger(v) ? undefined : v;
    const m = NUMBER.exec(scalarText(v) ?? "");
    if (!m) return undefined;
    const n = Number(m[0].replace(/,/g, "").replace("−", "-"));
    if (!Number.isFinite(n) || (kind === "integer" && !Number.isInteger(n))) return undefined;
    return n;
  }
  if (kind === "boolean") {
    if (typeof v === "boolean") return v;
    const t = (scalarText(v) ?? "").toLowerCase().replace(/^https?:\/\/schema\.org\//, "");
    if (/^(true|yes|y|1|instock|in stock|available|on)$/.test(t)) return true;
    if (/^(false|no|n|0|outofstock|out of stock|unavailable|off|soldout)$/.test(t)) return false;
    return undefined;
  }
  const text = scalarText(v);
  if (text === undefined) return undefined;
  if (Array.isArray(s.enum)) {
    const hit = s.enum.find((e) => String(e).toLowerCase() === text.toLowerCase());
    return hit;
  }
  if (kind === "string" || kind === "any") return text;
  return undefined;
}

/** RFC 6901 pointer segment */
export const pointer = (base: string, key: string | number): string => `${base}/${String(key).replace(/~/g, "~0").replace(/\//g, "~1")}`;
