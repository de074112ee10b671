// The extractive summary: the lead of the main content and its key sentences (those that share most words with the
// whole text), in page order, within a length bound. Sentences are copied, never rewritten.

const STOP = new Set(("a an and are as at be been but by can do does for from has have if in into is it its may more most " +
  "not of on or such than that the their then there these they this to was were which will with you your we our can also " +
  "one two use used using each other all any when where how what who see only so some").split(" "));

export const SUMMARY_MAX_CHARS = 600;
const MAX_SENTENCES = 5;

/** Prose paragraphs of a markdown document: no headings, code, tables, images, link lists or block quotes. */
export function prose(markdown: string): string[] {
  const out: string[] = [];
  const noCode = markdown.replace(/^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, "\n\n");
  for (const block of noCode.split(/\n{2,}/)) {
    const t = block.trim();
    if (!t || /^(#|\||!\[|>|- \[|\* \[|\[!)/.test(t)) continue;
    const text = t
      .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/[*`]+/g, "").replace(/(^|\s)_+|_+(?=\s|$)/g, "$1")
      .replace(/^\s*(?:[-*+]|\d+\.)\s+/gm, "")
      .replace(/\\([\\`*_{}[\]()#+\-.!|<>])/g, "$1")
      .replace(/\s*\[\[[^\]]*\]\]\([^)]*\)\s*(?=\))?/g, "")
      .replace(/\s+/g, " ")
      .trim();
    if (text.split(" ").length >= 6) out.push(text);
  }
  return out;
}

export function sentences(paragraph: string): string[] {
  return paragraph.split(/(?<=[.!?])\s+(?=[A-Z0-9"“(])/).map((s) => s.trim()).filter((s) => s.length >= 20 && /^["“(]?[\p{Lu}\d]/u.test(s) && /[.!?]["”’)]?$/.test(s));
}

export const words = (s: string): string[] => s.toLowerCase().split(/[^a-z0-9À-ɏ]+/).filter((w) => w.length > 2 && !STOP.has(w));

/** The lead sentence and the key sentences of the page, in page order, at most SUMMARY_MAX_CHARS. */
export function summarize(markdown: string, maxChars = SUMMARY_MAX_CHARS): string {
  const all = prose(markdown).flatMap(sentences);
  if (all.length === 0) return "";
  const freq = new Map<string, number>();
  for (const s of all) for (const w of new Set(words(s))) freq.set(w, (freq.get(w) ?? 0) + 1);
  const scored = all.map((s, i) => {
    const ws = words(s);
    const score = ws.length === 0 ? 0 : ws.reduce((n, w) => n + (freq.get(w) ?? 0), 0) / Math.sqrt(ws.length);
    return { s, i, score };
  });
  const chosen = new Set<number>([0]);
  let length = (all[0] as string).length;
  for (const c of [...scored].sort((a, b) => b.score - a.score || a.i - b.i)) {
    if (chosen.size >= MAX_SENTENCES) break;
    if (chosen.has(c.i) || length + c.s.length + 1 > maxChars) continue;
    chosen.add(c.i);
    length += c.s.length + 1;
  }
  const text = [...chosen].sort((a, b) => a - b).map((i) => all[i]).join(" ");
  return text.length <= maxChars ? text : text.slice(0, maxChars - 1).replace(/\s+\S*$/, "") + "…";
}
