// A client of any OpenAI-compatible chat-completions endpoint: JSON-schema structured output, a time limit per call,
// retries with backoff on 429/5xx (Retry-After honoured), bounded concurrency, tokens counted from `usage`.
import { PageError } from "../runtime/errors.ts";
import { retry } from "../runtime/retry.ts";
import type { Logger } from "../runtime/logger.ts";

export interface LlmSettings {
  /** e.g. http://127.0.0.1:8000/v1 (`/chat/completions` is appended) */
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  retries: number;
  concurrency: number;
  maxInputTokens: number;
  /** first backoff step (tests shorten it) */
  backoffMs?: number;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

export interface Completion {
  content: string;
  tokens: number;
}

const RETRY_AFTER_MAX_MS = 30_000;

class HttpStatusError extends PageError {}

/** Tokens of a text when the server does not say: ~4 characters a token. */
export const estimateTokens = (s: string): number => Math.ceil(s.length / 4);

export class LlmClient {
  readonly settings: LlmSettings;
  private readonly log: Logger;
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(settings: LlmSettings, log: Logger) {
    this.settings = settings;
    this.log = log.child({ component: "llm" });
  }

  private async slot<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.settings.concurrency) await new Promise<void>((r) => this.waiting.push(r));
    this.active++;
    try {
      return await fn();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }

  /** One completion; with a schema the server is asked for JSON that fits it (response_format json_schema). */
  complete(messages: ChatMessage[], schema?: { name: string; schema: object }): Promise<Completion> {
    return this.slot(() =>
      retry((attempt) => this.once(messages, schema, attempt), {
        retries: this.settings.retries,
        initialMs: this.settings.backoffMs ?? 500,
        maxMs: 10_000,
        retriable: (err) => err instanceof HttpStatusError && err.retriable,
        delayFor: (err) => (err instanceof HttpStatusError && err.retryAfterMs !== undefined ? Math.min(err.retryAfterMs, RETRY_AFTER_MAX_MS) : undefined),
        onRetry: (err, attempt, delayMs) => this.log.warn({ err: (err as Error).message, attempt, delayMs }, "chat completion: retrying"),
      }),
    );
  }

  private async once(messages: ChatMessage[], schema: { name: string; schema: object } | undefined, attempt: number): Promise<Completion> {
    const body = {
      model: this.settings.model,
      messages,
      temperature: 0,
      ...(schema ? { response_format: { type: "json_schema", json_schema: { name: schema.name, schema: schema.schema, strict: false } } } : {}),
    };
    let res: Response;
    try {
      res = await fetch(`${this.settings.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (err) {
      const name = (err as Error).name;
      if (name === "TimeoutError" || name === "AbortError") throw new PageError("LLM_TIMEOUT", `the model did not answer within ${this.settings.timeoutMs} ms`, { cause: err });
      throw new HttpStatusError("LLM_HTTP_ERROR", `chat completions unreachable: ${(err as Error).message}`, { cause: err, retriable: true });
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw new PageError("LLM_TIMEOUT", `the model's answer did not arrive within ${this.settings.timeoutMs} ms`, { cause: err });
    }
    if (!res.ok) {
      const retryAfter = Number(res.headers.get("retry-after"));
      throw new HttpStatusError("LLM_HTTP_ERROR", `chat completions answered HTTP ${res.status}: ${text.slice(0, 200)}`, {
        statusCode: res.status, retriable: res.status === 429 || res.status >= 500, ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      });
    }
    let parsed: { choices?: { message?: { content?: string | null } }[]; usage?: { total_tokens?: number } };
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new PageError("LLM_BAD_OUTPUT", "chat completions answered with a body that is not JSON", { cause: err });
    }
    const content = parsed.choices?.[0]?.message?.content ?? "";
    const tokens = parsed.usage?.total_tokens ?? estimateTokens(JSON.stringify(messages)) + estimateTokens(content);
    this.log.debug({ tokens, attempt }, "chat completion");
    return { content, tokens };
  }
}
