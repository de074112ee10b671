// The rules provider behind the provider interface: parse once (with the parser it is given), gather evidence, fill the schema; an extractive summary.
import type { ParentNode } from "./dom.ts";
import { gatherEvidence } from "./evidence.ts";
import type { JsonSchema } from "./json-schema.ts";
import type { ExtractInput, JsonProvider, JsonRequest, ProviderResult } from "./provider.ts";
import { extractWithRules } from "./rules-provider.ts";
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

export const rulesProvider = (parseHtml: ParseHtml): JsonProvider => ({
  name: "rules",
  async json(input: ExtractInput, request: JsonRequest): Promise<ProviderResult> {
    const ev = gatherEvidence(parseHtml(input.html));
    const { data, sources } = extractWithRules(ev, request.schema ?? DEFAULT_SCHEMA);
    const warnings = request.prompt ? ["the prompt was not used: the rules provider follows the schema only (configure an LLM to use prompts)"] : [];
    return { data, sources, tokens: 0, warnings };
  },
  async summary(input: ExtractInput) {
    return { summary: summarize(input.markdown), tokens: 0 };
  },
});
