// The llm provider: the page's markdown (cut to the token budget) and the caller's schema and prompt go to a
// chat-completions model; the answer is validated against the schema and, when it does not fit, the model gets one
// repair round with ajv's errors. Quoted evidence spans the model returns are checked against the markdown.
import { PageError } from "../runtime/errors.ts";
import type { JsonSchema } from "./json-schema.ts";
import { estimateTokens, type ChatMessage, type LlmClient } from "./llm-client.ts";
import type { EvidenceSpan, ExtractInput, JsonProvider, JsonRequest, ProviderResult, TextResult } from "./provider.ts";
import { DEFAULT_SCHEMA } from "./rules.ts";
import { compileUserSchema, validationErrors } from "./user-schema.ts";

const SYSTEM = [
  "You extract structured data from one web page, given as markdown.",
  "Answer with one JSON object {\"data\": ..., \"evidence\": {...}} and nothing else.",
  "`data` must fit the JSON Schema you are given. Use only what the page states: leave out a field the page does not state (null when it is required); never guess.",
  "`evidence` maps the JSON pointer of each field you filled (e.g. /price, /items/0/name) to the exact words of the page it came from.",
].join("\n");

/** The markdown cut to a token budget (at a paragraph end when one is near). */
export function cutToBudget(markdown: string, maxTokens: number): { text: string; cut: boolean } {
  const maxChars = maxTokens * 4;
  if (markdown.length <= maxChars) return { text: markdown, cut: false };
  const head = markdown.slice(0, maxChars);
  const para = head.lastIndexOf("\n\n");
  return { text: para > maxChars * 0.8 ? head.slice(0, para) : head, cut: true };
}

const squash = (s: string) => s.replace(/[*_`#>|]/g, "").replace(/\s+/g, " ").trim().toLowerCase();

function parseAnswer(content: string): { data: unknown; evidence: Record<string, string> } | undefined {
  const start = content.indexOf("{");
  const end = content.lastIndexOf("}");
  if (start < 0 || end < start) return undefined;
  try {
    const obj = JSON.parse(content.slice(start, end + 1)) as Record<string, unknown>;
    if (obj && typeof obj === "object" && "data" in obj) {
      const ev = obj.evidence && typeof obj.evidence === "object" ? (obj.evidence as Record<string, unknown>) : {};
      return { data: obj.data, evidence: Object.fromEntries(Object.entries(ev).filter(([, v]) => typeof v === "string")) as Record<string, string> };
    }
    return { data: obj, evidence: {} };
  } catch {
    return undefined; // not JSON: the repair round asks again
  }
}

export class LlmProvider implements JsonProvider {
  readonly name = "llm" as const;
  private readonly client: LlmClient;

  constructor(client: LlmClient) {
    this.client = client;
  }

  async json(input: ExtractInput, request: JsonRequest): Promise<ProviderResult> {
    const schema: JsonSchema = request.schema ?? DEFAULT_SCHEMA;
    const validate = compileUserSchema(schema);
    const { text, cut } = cutToBudget(input.markdown, this.client.settings.maxInputTokens);
    const wrapped = { type: "object", properties: { data: schema, evidence: { type: "object", additionalProperties: { type: "string" } } }, required: ["data"] };
    const messages: ChatMessage[] = [
      { role: "system", content: SYSTEM },
      { role: "user", content: `JSON Schema of data:\n${JSON.stringify(schema)}\n\n${request.prompt ? `Instructions: ${request.prompt}\n\n` : ""}Page ${input.url}:\n\n${text}` },
    ];
    const warnings = cut ? [`the page's markdown was cut to ${this.client.settings.maxInputTokens} tokens for the model`] : [];
    let tokens = 0;
    let answer: ReturnType<typeof parseAnswer>;
    for (let round = 0; round < 2; round++) {
      const completion = await this.client.complete(messages, { name: "extraction", schema: wrapped });
      tokens += completion.tokens;
      answer = parseAnswer(completion.content);
      const problem = answer === undefined ? "the answer is not a JSON object" : validate(answer.data) ? undefined : validationErrors(validate);
      if (problem === undefined) break;
      if (round === 1) throw new PageError("LLM_BAD_OUTPUT", `the model's JSON does not fit the schema after a repair round: ${problem}`);
      messages.push({ role: "assistant", content: completion.content }, { role: "user", content: `That answer is invalid: ${problem}. Answer again with the corrected JSON object only.` });
    }
    const ok = answer as NonNullable<typeof answer>;
    const page = squash(input.markdown);
    const sources: Record<string, EvidenceSpan> = {};
    for (const [ptr, span] of Object.entries(ok.evidence)) sources[ptr] = { kind: "llm", text: span, foundInMarkdown: span.trim() !== "" && page.includes(squash(span)) };
    if (Object.keys(ok.evidence).length === 0) warnings.push("the model gave no evidence spans");
    return { data: ok.data, sources, tokens, warnings };
  }

  async summary(input: ExtractInput): Promise<{ summary: string; tokens: number }> {
    const { text } = cutToBudget(input.markdown, this.client.settings.maxInputTokens);
    const c = await this.client.complete([
      { role: "system", content: "Summarise the web page you are given in at most three sentences, using only what it states." },
      { role: "user", content: text },
    ]);
    return { summary: c.content.trim(), tokens: c.tokens || estimateTokens(text) };
  }

  async answer(input: ExtractInput, question: string): Promise<TextResult> {
    const { text, cut } = cutToBudget(input.markdown, this.client.settings.maxInputTokens);
    const c = await this.client.complete([
      { role: "system", content: "Answer the user's question about the web page you are given, in at most three sentences, using only what the page states. If the page does not answer it, say so." },
      { role: "user", content: `Question: ${question}\n\nPage ${input.url}:\n\n${text}` },
    ]);
    return { text: c.content.trim(), tokens: c.tokens || estimateTokens(text), warnings: cut ? [`the page's markdown was cut to ${this.client.settings.maxInputTokens} tokens for the model`] : [] };
  }

  /** Passages the model quotes; only those found verbatim in the page are kept (a highlight is the page's text). */
  async highlights(input: ExtractInput, query: string): Promise<TextResult> {
    const { text, cut } = cutToBudget(input.markdown, this.client.settings.maxInputTokens);
    const c = await this.client.complete([
      { role: "system", content: "Quote, word for word, the one to three passages of the web page you are given that are most relevant to the user's query. Answer with the passages only, separated by blank lines." },
      { role: "user", content: `Query: ${query}\n\nPage ${input.url}:\n\n${text}` },
    ]);
    const page = squash(input.markdown);
    const quoted = c.content.split(/\n\s*\n/).map((p) => p.trim().replace(/^["“]|["”]$/g, "")).filter((p) => p !== "");
    const kept = quoted.filter((p) => page.includes(squash(p)));
    const warnings = [...(cut ? [`the page's markdown was cut to ${this.client.settings.maxInputTokens} tokens for the model`] : []),
      ...(kept.length < quoted.length ? [`highlights: ${quoted.length - kept.length} passage(s) the model gave are not in the page and were dropped`] : [])];
    return { text: kept.join("\n\n"), tokens: c.tokens || estimateTokens(text), warnings };
  }
}
