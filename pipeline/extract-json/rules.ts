// The rules provider behind the provider interface: parse once (with the parser it is given), gather evidence, fill the schema; an extractive summary.
// The json part also runs where the page is already parsed (rules-analyzer.ts, in a convert worker); its result then
// travels with the page and `precomputedRules` serves it without a second parse.
import type { ParentNode } from "./dom.ts";
import { gatherEvidence } from "./evidence.ts";
import type { JsonSchema } from "./json-schema.ts";
import type { ExtractInput, JsonProvider, JsonRequest, ProviderResult, TextResult } from "./provider.ts";
import { extractWithRules } from "./rules-provider.ts";
import { extractiveAnswer, extractiveHighlights } from "./passages.ts";
import { summarize } from "./summary.ts";

/** Without a schema the rules provider reads the page's common facts. */
export const DEFAULT_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    title: { type: "string" },
    description: { type: "string" },
    author: { type: "string" },
    datePublished: { type: "string" },
    image: { type: "string" },
    siteName: { type: "string" },
  },
};

/** An HTML parser giving parse5's node shape (the composition root passes convert's fast parser). */
export type ParseHtml = (html: string) => ParentNode;

/** The rules provider's json of a parsed page. */
export function rulesJson(doc: ParentNode, request: JsonRequest): ProviderResult {
  const { data, sources } = extractWithRules(gatherEvidence(doc), request.schema ?? DEFAULT_SCHEMA);
  const warnings = request.prompt ? ["the prompt was not used: the rules provider follows the schema only (configure an LLM to use prompts)"] : [];
  return { data, sources, tokens: 0, warnings };
}

export const rulesProvider = (parseHtml: ParseHtml): JsonProvider => ({
  name: "rules",
  async json(input: ExtractInput, request: JsonRequest): Promise<ProviderResult> {
    return rulesJson(parseHtml(input.html), request);
  },
  async summary(input: ExtractInput) {
    return { summary: summarize(input.markdown), tokens: 0 };
  },
  answer: async (input, question) => rulesAnswer(input, question),
  highlights: async (input, query) => rulesHighlights(input, query),
});

/** question / highlights without an LLM: the page's own best-matching text, with a warning that says how it was found. */
function extractive(field: "answer" | "highlights", text: string, found: string): TextResult {
  const what = field === "answer" ? "no sentence of the page matches the question's words" : "no passage of the page matches the query's words";
  return { text, tokens: 0, warnings: [`${field}: no LLM is configured (EXTRACT_PROVIDER=rules)${text ? `: ${found}` : ` and ${what}`}`] };
}

const rulesAnswer = (input: ExtractInput, question: string): TextResult =>
  extractive("answer", extractiveAnswer(input.markdown, question), "this is the page's own sentence that best matches the question, not a generated answer");

const rulesHighlights = (input: ExtractInput, query: string): TextResult =>
  extractive("highlights", extractiveHighlights(input.markdown, query), "passages were chosen by the words they share with the query");

/** The rules result computed where the page was parsed (a convert worker), in plain data. */
export interface RulesResult {
  data?: unknown;
  sources: Record<string, unknown>;
  warnings: string[];
}

/**
 * `provider` when it is not the rules provider or no result came with the page; else the rules provider answering
 * json from that result (no parse) and summaries as before.
 */
export function precomputedRules(provider: JsonProvider, result: RulesResult | undefined): JsonProvider {
  if (provider.name !== "rules" || !result) return provider;
  return {
    name: "rules",
    json: async () => ({ data: result.data, sources: result.sources as ProviderResult["sources"], tokens: 0, warnings: result.warnings }),
    summary: (input) => provider.summary(input),
    answer: (input, question) => provider.answer(input, question),
    highlights: (input, query) => provider.highlights(input, query),
  };
}
