// The one way values reach SQL. Every literal is escaped here; nothing else builds SQL from values.
// Works on ClickHouse 18.16 and current releases (no query parameters on 18.16).

export class SqlFragment {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
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
  return new SqlFragment(out);
}

/** `(v1, v2, ...)` for a VALUES clause. */
export function tuple(values: unknown[]): string {
  return `(${values.map(literal).join(", ")})`;
}
