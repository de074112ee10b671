// The interface both providers implement (rules: rules-provider.ts over the page's evidence; llm: llm-provider.ts).
import type { Source } from "./evidence.ts";
import type { JsonSchema } from "./json-schema.ts";

export type ProviderName = "rules" | "llm";

/** What extraction reads of a converted page. */
export interface ExtractInput {
  url: string;
  /** the page as fetched (JSON-LD, meta and tables live there) */
  html: string;
  /** the page's markdown (main content) */
  markdown: string;
}

export interface JsonRequest {
  schema?: JsonSchema;
  prompt?: string;
}

/** LLM provenance: the quoted span the model gave, and whether it was found in the markdown. */
export interface EvidenceSpan {
  kind: "llm";
  text: string;
  foundInMarkdown: boolean;
}

export interface ProviderResult {
  data: unknown;
  /** JSON pointer of a field -> where its value came from */
  sources: Record<string, Source | EvidenceSpan>;
  tokens: number;
  warnings: string[];
}

export interface JsonProvider {
  readonly name: ProviderName;
  json(input: ExtractInput, request: JsonRequest): Promise<ProviderResult>;
  summary(input: ExtractInput): Promise<{ summary: string; tokens: number }>;
  /** The question format: an answer from the page (document.answer); warnings say how it was found. */
  answer(input: ExtractInput, question: string): Promise<TextResult>;
  /** The highlights format: the page's passages that match the query, verbatim (document.highlights). */
  highlights(input: ExtractInput, query: string): Promise<TextResult>;
}

export interface TextResult {
  text: string;
  tokens: number;
  warnings: string[];
}
