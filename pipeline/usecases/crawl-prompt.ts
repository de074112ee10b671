// A crawl's natural-language `prompt` turned into crawl options by the model (POST /v2/crawl/params-preview, and
// `prompt` on POST /v2/crawl): generated options fill only the fields the caller did not send. Without a model,
// params-preview is a 400 and a crawl runs as given, with a warning in its status.
import type { CrawlRequest } from "../../schemas/index.ts";
import type { LlmClient } from "../extract-json/llm-client.ts";
import { compileUserSchema, validationErrors } from "../extract-json/user-schema.ts";
import { errorMessage, invalidField } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";

export type { LlmClient };

export const NO_LLM = "no LLM is configured on this server (set OPENAI_BASE_URL, OPENAI_API_KEY or OLLAMA_BASE_URL)";
const FAILED = "Failed to process natural language prompt. Please try rephrasing.";

/** The options a prompt may set (as the anchor's params-preview returns them). */
const PARAMS_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: {
    includePaths: { type: "array", items: { type: "string" } },
    excludePaths: { type: "array", items: { type: "string" } },
    maxDiscoveryDepth: { type: "integer", minimum: 0 },
    crawlEntireDomain: { type: "boolean" },
    allowExternalLinks: { type: "boolean" },
    allowSubdomains: { type: "boolean" },
    sitemap: { type: "string", enum: ["skip", "include", "only"] },
    ignoreQueryParameters: { type: "boolean" },
    deduplicateSimilarURLs: { type: "boolean" },
    delay: { type: "number", minimum: 0 },
    limit: { type: "integer", minimum: 1 },
  },
};

export type GeneratedParams = Partial<Pick<CrawlRequest, "includePaths" | "excludePaths" | "maxDiscoveryDepth" | "crawlEntireDomain" | "allowExternalLinks" | "allowSubdomains" | "sitemap" | "ignoreQueryParameters" | "deduplicateSimilarURLs" | "delay" | "limit">>;

/** The model's crawl options for a prompt; a RequestError (400) when there is no model or its answer is unusable. */
export async function crawlParamsFromPrompt(llm: LlmClient | undefined, url: string, prompt: string, log: Logger): Promise<GeneratedParams> {
  if (!llm) throw invalidField(["prompt"], `${FAILED} (${NO_LLM})`);
  const validate = compileUserSchema(PARAMS_SCHEMA);
  let answer: unknown;
  try {
    const c = await llm.complete([
      { role: "system", content: "You turn a request about crawling a website into crawler options. includePaths/excludePaths are regular expressions matched against URL paths (e.g. ^/blog/.*). Answer with one JSON object of the options the request implies, and nothing else." },
      { role: "user", content: `Start URL: ${url}\nRequest: ${prompt}` },
    ], { name: "crawl_options", schema: PARAMS_SCHEMA });
    answer = JSON.parse(c.content.slice(c.content.indexOf("{"), c.content.lastIndexOf("}") + 1));
  } catch (err) {
    log.warn({ err: errorMessage(err) }, "crawl prompt: the model failed");
    throw invalidField(["prompt"], FAILED);
  }
  if (!validate(answer)) {
    log.warn({ problem: validationErrors(validate) }, "crawl prompt: the model's options do not fit");
    throw invalidField(["prompt"], FAILED);
  }
  return answer as GeneratedParams;
}

/** Generated options fill only what the caller did not send (or sent as null). */
export function mergePromptOptions(body: CrawlRequest, generated: GeneratedParams): CrawlRequest {
  const out: Record<string, unknown> = { ...body };
  for (const [k, v] of Object.entries(generated)) if (out[k] === undefined || out[k] === null) out[k] = v;
  return out as unknown as CrawlRequest;
}
