// The one way values reach SQL. Every literal is escaped here; nothing else builds SQL from values.
// Works on ClickHouse 18.16 and current releases (no query parameters on 18.16).

/** The values of a `sql` template, kept for `shape` and `example` (the SQL capture, sql-capture.ts). */
interface Parts {
  strings: readonly string[];
  values: readonly unknown[];
  /** a variable-length list (`list`): one shape and example whatever its length */
  list?: boolean;
}

export class SqlFragment {
  readonly text: string;
  private readonly parts: Parts | undefined;
  constructor(text: string, parts?: Parts) {
    this.text = text;
    this.parts = parts;
  }
  toString(): string {
    return this.text;
  }
  /**
   * The text with each value as its kind (`{String}`, `{Number}`, ...): one shape per statement Trawl sends, whatever
   * its values. Computed only when asked (the capture), from the values kept.
   */
  get shape(): string {
    return this.render(shapeOf);
  }
  /** The text with every string value replaced by a representative `'x'` (never a value that may be secret). */
  get example(): string {
    return this.render(exampleLiteral);
  }
  private render(of: (value: unknown) => string): string {
    const p = this.parts;
    if (!p) return this.text;
    if (p.list) return p.values.length ? of(p.values[0]) : "";
    let out = p.strings[0] ?? "";
    p.values.forEach((v, i) => {
      out += of(v) + (p.strings[i + 1] ?? "");
    });
    return out;
  }
}

const ESCAPES: Record<string, string> = {
  "\\": "\\\\",
  "'": "\\'",
  "\0": "\\0",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\x07": "\\a",
};

/** A quoted string literal. Lone UTF-16 surrogates become U+FFFD (ClickHouse strings are UTF-8 bytes). */
export function str(value: string): string {
  const wellFormed = value.toWellFormed();
  // eslint-disable-next-line no-control-regex
  return `'${wellFormed.replace(/[\\'\0\b\f\n\r\t\v\x07]/g, (c) => ESCAPES[c] ?? c)}'`;
}

export function num(value: number | bigint): string {
  if (typeof value === "bigint") return value.toString();
  if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
  return Number.isInteger(value) ? value.toFixed(0) : String(value);
}

export function ident(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new TypeError(`invalid SQL identifier: ${JSON.stringify(name)}`);
  return name;
}

/** A literal of any supported JS value. */
export function literal(value: unknown): string {
  if (value instanceof SqlFragment) return value.text;
  if (typeof value === "string") return str(value);
  if (typeof value === "number" || typeof value === "bigint") return num(value);
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value === null || value === undefined) return "NULL";
  if (Array.isArray(value)) return `[${value.map(literal).join(", ")}]`;
  throw new TypeError(`cannot turn ${typeof value} into SQL`);
}

/** Raw SQL text (identifiers, keywords). Never pass user input here. */
export function raw(text: string): SqlFragment {
  return new SqlFragment(text);
}

/** Tagged template: every interpolated value is escaped by `literal`. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): SqlFragment {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += literal(v) + (strings[i + 1] ?? "");
  });
  return new SqlFragment(out, { strings, values });
}

/** `v1, v2, ...` for an IN list: one shape whatever its length. */
export function list(values: unknown[]): SqlFragment {
  return new SqlFragment(values.map(literal).join(", "), { strings: [], values, list: true });
}

/** Fragments joined by `separator` (raw SQL text), keeping their shapes. */
export function join(fragments: SqlFragment[], separator: string): SqlFragment {
  const strings = ["", ...fragments.slice(1).map(() => separator), ""];
  return new SqlFragment(fragments.map((f) => f.text).join(separator), { strings, values: fragments });
}

/** `(v1, v2, ...)` for a VALUES clause. */
export function tuple(values: unknown[]): string {
  return `(${values.map(literal).join(", ")})`;
}

/** A value's kind in a statement's shape. */
function shapeOf(value: unknown): string {
  if (value instanceof SqlFragment) return value.shape;
  if (Array.isArray(value)) return `[${[...new Set(value.map(shapeOf))].join(", ")}]`;
  if (value === null || value === undefined) return "NULL";
  return `{${typeof value === "string" ? "String" : typeof value === "boolean" ? "Bool" : "Number"}}`;
}

/** `literal`, except that a string is `'x'`: numbers are kept (they are not secret, and a LIMIT or a day needs its own). */
export function exampleLiteral(value: unknown): string {
  if (value instanceof SqlFragment) return value.example;
  if (typeof value === "string") return "'x'";
  if (Array.isArray(value)) return `[${value.map(exampleLiteral).join(", ")}]`;
  return literal(value);
}
