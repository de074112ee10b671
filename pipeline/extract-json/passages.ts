// Extractive answers without an LLM: the question and highlights formats of the rules provider. The page's prose
// (summary.ts's reading of the markdown, plus list items and table-free short lines that carry facts) is split into
// sentences; each is scored by the query words it contains, rarer words weighing more (an IDF over the page's own
// sentences) and near forms counted ("install" matches "installing", "installation"). Sentences are copied, never
// rewritten: an answer is the page's own words, and says so in a warning.
import { prose, sentences, words } from "./summary.ts";

export const ANSWER_MAX_CHARS = 500;
export const HIGHLIGHTS_MAX = 3;

/** A crude stem: enough to match a word's usual English forms against each other. */
function stem(w: string): string {
  for (const suffix of ["ational", "ations", "ation", "ings", "ing", "ies", "ied", "ers", "er", "es", "ed", "ly", "s"]) {
    if (w.length - suffix.length >= 4 && w.endsWith(suffix)) return w.slice(0, -suffix.length);
  }
  return w;
}

const stems = (s: string): Set<string> => new Set(words(s).map(stem));

/** List items and short lines: facts pages state outside paragraphs ("- Port: 5432"). */
function listLines(markdown: string): string[] {
  const out: string[] = [];
  for (const line of markdown.split("\n")) {
    const m = /^\s*(?:[-*+]|\d+\.)\s+(.*)$/.exec(line);
    const text = m?.[1]?.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/[*`]+/g, "").replace(/(^|\s)_+|_+(?=\s|$)/g, "$1").trim();
    if (text && text.split(" ").length >= 3) out.push(text);
  }
  return out;
}

export interface Passage {
  text: string;
  /** position in the page */
  index: number;
  score: number;
}

/** The page's sentences that share words with the query, best first (ties in page order). */
export function rankPassages(markdown: string, query: string): Passage[] {
  const all = [...new Set([...prose(markdown).flatMap(sentences), ...listLines(markdown)])];
  const q = stems(query);
  if (q.size === 0 || all.length === 0) return [];
  const bags = all.map(stems);
  const df = new Map<string, number>();
  for (const bag of bags) for (const w of bag) if (q.has(w)) df.set(w, (df.get(w) ?? 0) + 1);
  const idf = (w: string) => Math.log(1 + all.length / (df.get(w) ?? all.length));
  const scored: Passage[] = [];
  bags.forEach((bag, index) => {
    let score = 0;
    for (const w of q) if (bag.has(w)) score += idf(w);
    // a long sentence is not better for holding more words
    if (score > 0) scored.push({ text: all[index] as string, index, score: score / Math.sqrt(Math.max(8, bag.size) / 8) });
  });
  return scored.sort((a, b) => b.score - a.score || a.index - b.index);
}

/** The question format without an LLM: the best-matching sentence, and the next best when it fits, in page order. */
export function extractiveAnswer(markdown: string, question: string): string {
  const ranked = rankPassages(markdown, question);
  const best = ranked[0];
  if (!best) return "";
  const chosen = [best];
  const second = ranked[1];
  if (second && second.score >= best.score * 0.8 && best.text.length + second.text.length + 1 <= ANSWER_MAX_CHARS) chosen.push(second);
  const text = chosen.sort((a, b) => a.index - b.index).map((p) => p.text).join(" ");
  return text.length <= ANSWER_MAX_CHARS ? text : text.slice(0, ANSWER_MAX_CHARS - 1).replace(/\s+\S*$/, "") + "…";
}

/** The highlights format without an LLM: up to HIGHLIGHTS_MAX passages, best first, separated by blank lines. */
export function extractiveHighlights(markdown: string, query: string): string {
  return rankPassages(markdown, query).slice(0, HIGHLIGHTS_MAX).map((p) => p.text).join("\n\n");
}
