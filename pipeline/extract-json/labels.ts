// Matching schema property names (and descriptions) to the labels a page uses: case, spacing, separators and plurals
// are ignored, and a few documented synonym groups (docs/api.md: "JSON extraction") count as the same word.

const SYNONYMS: readonly (readonly string[])[] = [
  ["title", "headline"],
  ["author", "creator", "byline", "written by"],
  ["date published", "published", "publish date", "publication date", "published time", "date", "release date"],
  ["date modified", "modified", "updated", "last updated", "modified time"],
  ["description", "summary", "abstract", "desc"],
  ["price", "cost", "price amount", "amount"],
  ["currency", "price currency"],
  ["rating", "rating value", "aggregate rating", "stars", "score"],
  ["review count", "reviews", "number of reviews"],
  ["image", "thumbnail", "picture", "photo"],
  ["url", "link", "href", "website"],
  ["sku", "product code", "item number"],
  ["brand", "manufacturer", "make"],
  ["email", "e mail", "mail"],
  ["phone", "telephone", "tel", "phone number"],
  ["tag", "keyword", "category"],
  ["name", "term", "identifier"],
  ["availability", "stock", "in stock"],
  ["color", "colour"],
];

/** `storageSizes` / `storage_size` / "Storage Size:" -> ["storage", "size"] */
export function tokens(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .map(singular);
}

function singular(w: string): string {
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (w.length > 4 && /(ss|x|ch|sh)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !/(ss|us|is)$/.test(w)) return w.slice(0, -1);
  return w;
}

export const labelKey = (s: string): string => tokens(s).join(" ");

const GROUP_OF = new Map<string, number>();
SYNONYMS.forEach((group, i) => group.forEach((w) => GROUP_OF.set(labelKey(w), i)));

/**
 * How well a page label names a schema property, 0 (not at all) to 1 (same words). The property's description
 * counts when it states the label outright.
 */
export function labelScore(property: string, label: string, description?: string): number {
  const p = labelKey(property);
  const l = labelKey(label);
  if (!p || !l) return 0;
  if (p === l) return 1;
  const pt = p.split(" ");
  const lt = l.split(" ");
  if (pt.length === lt.length && pt.every((w) => lt.includes(w))) return 0.95;
  const gp = GROUP_OF.get(p);
  if (gp !== undefined && gp === GROUP_OF.get(l)) return 0.9;
  if (pt.join("") === lt.join("")) return 0.9;
  if (description) {
    const d = labelKey(description);
    if (d === l) return 0.85;
    if (lt.length >= 2 && ` ${d} `.includes(` ${l} `)) return 0.6;
  }
  if (lt.length - pt.length === 1 && pt.every((w) => lt.includes(w))) return 0.6;
  if (pt.length - lt.length === 1 && lt.every((w) => pt.includes(w))) return 0.55;
  return 0;
}

export const MATCH_THRESHOLD = 0.55;
