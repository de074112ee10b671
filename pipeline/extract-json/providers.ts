// Which provider answers: EXTRACT_PROVIDER=auto picks the llm provider when a chat-completions endpoint is configured
// (OPENAI_BASE_URL, OPENAI_API_KEY or its OLLAMA_BASE_URL alias), rules otherwise; `rules` / `llm` force either.
import { ConfigError, type Config } from "../runtime/config.ts";
import type { Logger } from "../runtime/logger.ts";
import { LlmClient, type LlmSettings } from "./llm-client.ts";
import { LlmProvider } from "./llm-provider.ts";
import type { JsonProvider } from "./provider.ts";
import { rulesProvider, type ParseHtml } from "./rules.ts";

type LlmConfig = Pick<Config, "extractProvider" | "openaiBaseUrl" | "openaiApiKey" | "ollamaBaseUrl" | "modelName" | "llmTimeoutMs" | "llmRetries" | "llmConcurrency" | "llmMaxInputTokens">;

/** The chat-completions settings, or undefined when no endpoint is configured. */
export function llmSettings(config: LlmConfig): LlmSettings | undefined {
  const base = config.openaiBaseUrl || (config.ollamaBaseUrl ? `${config.ollamaBaseUrl.replace(/\/v1$/, "")}/v1` : "") || (config.openaiApiKey ? "https://api.openai.com/v1" : "");
  if (!base) return undefined;
  return {
    baseUrl: base.replace(/\/+$/, ""), apiKey: config.openaiApiKey, model: config.modelName, timeoutMs: config.llmTimeoutMs,
    retries: config.llmRetries, concurrency: config.llmConcurrency, maxInputTokens: config.llmMaxInputTokens,
  };
}

export interface Providers {
  /** answers json / summary requests */
  provider: JsonProvider;
  /** the model, when configured (crawl prompts, params-preview) */
  llm?: LlmClient;
}

export function chooseProviders(config: LlmConfig, parseHtml: ParseHtml, log: Logger): Providers {
  const settings = llmSettings(config);
  if (config.extractProvider === "llm" && !settings) {
    throw new ConfigError("config: EXTRACT_PROVIDER=llm needs OPENAI_BASE_URL, OPENAI_API_KEY or OLLAMA_BASE_URL");
  }
  const llm = settings ? new LlmClient(settings, log) : undefined;
  const useLlm = llm && config.extractProvider !== "rules";
  return { provider: useLlm ? new LlmProvider(llm) : rulesProvider(parseHtml), ...(llm ? { llm } : {}) };
}
