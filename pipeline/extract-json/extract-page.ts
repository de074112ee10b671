// The use case shared by the extract-json stage, POST /v2/scrape and re-extraction: a converted page's document gets
// `json` and/or `summary`, validated against the caller's schema, with the provider, the sources and the tokens in
// `metadata.extract`. A failed extraction never loses the page: the document keeps its content and gets
// `metadata.error` and a `warning`.
import type { PageDocument } from "../../schemas/index.ts";
import { errorCode, errorMessage } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ExtractInput, JsonProvider, JsonRequest } from "./provider.ts";
import { compileUserSchema, validationErrors } from "./user-schema.ts";

export interface ExtractSpec {
  json?: JsonRequest;
  summary?: boolean;
  /** the question format's question */
  question?: string;
  /** the highlights format's query */
  highlights?: string;
}

/** Credits of the extraction formats (Firecrawl v2): json makes a page 5; question and highlights add 4 each. */
export function extractionCredits(credits: number, spec: ExtractSpec): number {
  let total = spec.json ? Math.max(credits, JSON_FORMAT_CREDITS) : credits;
  if (spec.question !== undefined) total += QUESTION_CREDITS;
  if (spec.highlights !== undefined) total += HIGHLIGHTS_CREDITS;
  return total;
}

/** Credits of a page with the json format (Firecrawl bills 5 in place of 1). */
export const JSON_FORMAT_CREDITS = 5;
/** The question and highlights formats cost 4 credits on top of the page (Firecrawl v2). */
export const QUESTION_CREDITS = 4;
export const HIGHLIGHTS_CREDITS = 4;

export interface ExtractMetadata {
  provider: JsonProvider["name"];
  tokens: number;
  /** the json output fits the schema */
  valid?: boolean;
  sources?: Record<string, unknown>;
  warnings?: string[];
}

/** Adds json / summary to the document in place; returns the tokens used. */
export async function extractInto(document: PageDocument, input: ExtractInput, spec: ExtractSpec, provider: JsonProvider, log: Logger): Promise<number> {
  const meta: ExtractMetadata = { provider: provider.name, tokens: 0 };
  const warnings: string[] = [];
  const errors: string[] = [];
  if (spec.json) {
    try {
      const result = await provider.json(input, spec.json);
      meta.tokens += result.tokens;
      warnings.push(...result.warnings);
      document.json = result.data;
      meta.sources = result.sources;
      if (spec.json.schema) {
        const validate = compileUserSchema(spec.json.schema);
        meta.valid = validate(result.data);
        if (!meta.valid) warnings.push(`json does not fit the schema: ${validationErrors(validate)}`);
      } else meta.valid = true;
    } catch (err) {
      log.warn({ url: input.url, code: errorCode(err), err: errorMessage(err) }, "json extraction failed; the page is stored without json");
      errors.push(`json extraction failed (${errorCode(err)}): ${errorMessage(err)}`);
    }
  }
  if (spec.summary) {
    try {
      const s = await provider.summary(input);
      meta.tokens += s.tokens;
      document.summary = s.summary;
    } catch (err) {
      log.warn({ url: input.url, code: errorCode(err), err: errorMessage(err) }, "summary failed; the page is stored without it");
      errors.push(`summary failed (${errorCode(err)}): ${errorMessage(err)}`);
    }
  }
  for (const [field, ask] of [["answer", spec.question], ["highlights", spec.highlights]] as const) {
    if (ask === undefined) continue;
    try {
      const r = field === "answer" ? await provider.answer(input, ask) : await provider.highlights(input, ask);
      meta.tokens += r.tokens;
      warnings.push(...r.warnings);
      document[field] = r.text;
    } catch (err) {
      log.warn({ url: input.url, code: errorCode(err), err: errorMessage(err) }, `${field} failed; the page is stored without it`);
      errors.push(`${field} failed (${errorCode(err)}): ${errorMessage(err)}`);
    }
  }
  if (warnings.length > 0) meta.warnings = warnings;
  document.metadata.extract = meta;
  if (errors.length > 0) document.metadata.error = errors.join("; ");
  const warning = [...errors, ...warnings].join("; ");
  if (warning) document.warning = document.warning ? `${String(document.warning)}; ${warning}` : warning;
  return meta.tokens;
}
