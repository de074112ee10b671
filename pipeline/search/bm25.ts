// BM25 over stored documents: title, headings and markdown, weighted as one field (BM25F-style term frequencies).
// Pure: the caller supplies the candidates and the corpus statistics.

/** Lower-case words of letters and digits (any script): the tokens of queries and documents. */
export function tokens(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

export interface IndexedDoc {
  url: string;
  title: string;
  description: string;
  headings: string;
  markdown: string;
}

export interface Scored<T> {
  item: T;
  score: number;
}

const K1 = 1.2;
const B = 0.75;
const WEIGHTS = { title: 3, headings: 2, markdown: 1 } as const;

/** Markdown headings (`# ...` lines) of a document. */
export function headingsOf(markdown: string): string {
  return (markdown.match(/^#{1,6}[ \t].*$/gm) ?? []).join("\n");
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Occurrences of a whole word (not inside a longer word) in lower-case text. */
function occurrences(text: string, word: RegExp): number {
  word.lastIndex = 0;
  let n = 0;
  while (word.exec(text)) n++;
  return n;
}

/**
 * Scores each candidate for the query terms. `corpus` is the number of documents searched and `df[i]` how many of
 * them contain `terms[i]`. Candidates with no query term score 0 and are left out; the rest come best first.
 * Term frequencies count whole-word occurrences per field (one regex scan per term, no tokenising of whole
 * documents); the length normalisation uses characters, proportional to words for one language.
 */
export function rankBm25<T extends IndexedDoc>(candidates: T[], terms: string[], corpus: number, df: number[]): Scored<T>[] {
  if (candidates.length === 0 || terms.length === 0) return [];
  const patterns = terms.map((t) => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(t)}(?![\\p{L}\\p{N}])`, "gu"));
  const lengths = candidates.map((d) => d.title.length + d.markdown.length);
  const avgdl = Math.max(1, lengths.reduce((a, b) => a + b, 0) / lengths.length);
  const n = Math.max(corpus, candidates.length);
  const idf = terms.map((_, i) => {
    const f = Math.min(n, Math.max(1, df[i] ?? 1));
    return Math.log(1 + (n - f + 0.5) / (f + 0.5));
  });
  const out: Scored<T>[] = [];
  candidates.forEach((item, d) => {
    const fields = { title: item.title.toLowerCase(), headings: item.headings.toLowerCase(), markdown: item.markdown.toLowerCase() };
    const norm = K1 * (1 - B + (B * (lengths[d] as number)) / avgdl);
    let score = 0;
    patterns.forEach((p, i) => {
      if (!fields.title.includes(terms[i] as string) && !fields.markdown.includes(terms[i] as string)) return;
      const tf = WEIGHTS.title * occurrences(fields.title, p) + WEIGHTS.headings * occurrences(fields.headings, p) + WEIGHTS.markdown * occurrences(fields.markdown, p);
      if (tf > 0) score += (idf[i] as number) * ((tf * (K1 + 1)) / (tf + norm));
    });
    if (score > 0) out.push({ item, score });
  });
  return out.sort((a, b) => b.score - a.score);
}

/** A short excerpt of the markdown around the first query term (for results without a meta description). */
export function snippet(markdown: string, terms: string[], max = 200): string {
  const lines = markdown.split("\n").map((l) => l.replace(/^[#>*\-\s]+/, "").trim()).filter(Boolean);
  const line = lines.find((l) => tokens(l).some((t) => terms.includes(t))) ?? lines[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
