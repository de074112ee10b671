// The llm provider's protocol against a local HTTP server that speaks chat completions with recorded answers
// (no model runs here): valid output, invalid then repaired, 429 then success, 5xx exhausted, time-out, concurrency.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../runtime/logger.ts";
import { PageError } from "../runtime/errors.ts";
import { LlmClient, type LlmSettings } from "./llm-client.ts";
import { LlmProvider } from "./llm-provider.ts";
import { extractInto } from "./extract-page.ts";

type Reply = (req: { body: Record<string, unknown>; auth: string | undefined }, res: ServerResponse) => void | Promise<void>;
const log = createLogger("silent", {});
let server: Server;
let base = "";
let replies: Reply[] = [];
let seen: { body: Record<string, unknown>; auth: string | undefined }[] = [];
let inFlight = 0;
let maxInFlight = 0;

const completion = (content: string, tokens = 100) => JSON.stringify({ id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage: { prompt_tokens: tokens - 10, completion_tokens: 10, total_tokens: tokens } });
const ok = (content: string, tokens?: number): Reply => (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" }).end(completion(content, tokens));
};
const status = (code: number, headers: Record<string, string> = {}): Reply => (_req, res) => {
  res.writeHead(code, { "content-type": "application/json", ...headers }).end(JSON.stringify({ error: { message: "busy" } }));
};

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = "";
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      const entry = { body: JSON.parse(raw) as Record<string, unknown>, auth: req.headers.authorization };
      seen.push(entry);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      res.on("close", () => inFlight--);
      const reply = replies.shift() ?? status(500);
      await reply(entry, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  replies = [];
  seen = [];
  maxInFlight = 0;
});

const settings = (over: Partial<LlmSettings> = {}): LlmSettings => ({ baseUrl: base, apiKey: "k-test", model: "m-test", timeoutMs: 2000, retries: 2, concurrency: 2, maxInputTokens: 1000, backoffMs: 10, ...over });
const schema = { type: "object", required: ["name", "price"], properties: { name: { type: "string" }, price: { type: "number" } } };
const input = { url: "http://shop.test/p", html: "", markdown: "# Lamp\n\nThe Lamp costs 12.5 EUR." };

describe("llm provider against a local chat-completions server", () => {
  it("valid output: structured-output request, data, evidence checked against the markdown, tokens counted", async () => {
    replies = [ok(JSON.stringify({ data: { name: "Lamp", price: 12.5 }, evidence: { "/name": "Lamp", "/price": "costs 13 EUR" } }), 321)];
    const r = await new LlmProvider(new LlmClient(settings(), log)).json(input, { schema, prompt: "the product" });
    expect(r.data).toEqual({ name: "Lamp", price: 12.5 });
    expect(r.tokens).toBe(321);
    expect(r.sources).toEqual({ "/name": { kind: "llm", text: "Lamp", foundInMarkdown: true }, "/price": { kind: "llm", text: "costs 13 EUR", foundInMarkdown: false } });
    const req = seen[0] as (typeof seen)[number];
    expect(req.auth).toBe("Bearer k-test");
    expect(req.body.model).toBe("m-test");
    expect((req.body.response_format as { type: string }).type).toBe("json_schema");
    expect(JSON.stringify(req.body.messages)).toContain("The Lamp costs 12.5 EUR.");
    expect(JSON.stringify(req.body.messages)).toContain("Instructions: the product");
  });

  it("invalid then repaired: one repair round carries ajv's complaint; tokens of both rounds counted", async () => {
    replies = [ok(JSON.stringify({ data: { name: "Lamp", price: "cheap" } }), 50), ok(JSON.stringify({ data: { name: "Lamp", price: 12.5 } }), 60)];
    const r = await new LlmProvider(new LlmClient(settings(), log)).json(input, { schema });
    expect(r.data).toEqual({ name: "Lamp", price: 12.5 });
    expect(r.tokens).toBe(110);
    expect(seen).toHaveLength(2);
    const repair = (seen[1]?.body.messages as { role: string; content: string }[]).at(-1);
    expect(repair?.content).toContain("/price must be number");
  });

  it("still invalid after the repair round: LLM_BAD_OUTPUT, and the page keeps its content with metadata.error", async () => {
    replies = [ok("not json at all"), ok(JSON.stringify({ data: { name: 3 } }))];
    const provider = new LlmProvider(new LlmClient(settings(), log));
    await expect(provider.json(input, { schema })).rejects.toMatchObject({ code: "LLM_BAD_OUTPUT" });
    replies = [ok("not json at all"), ok(JSON.stringify({ data: { name: 3 } }))];
    const doc = { markdown: input.markdown, metadata: { sourceURL: input.url, url: input.url, statusCode: 200, scrapeId: "s" } } as Parameters<typeof extractInto>[0];
    await extractInto(doc, input, { json: { schema } }, provider, log);
    expect(doc.json).toBeUndefined();
    expect(doc.markdown).toBe(input.markdown);
    expect(String(doc.metadata.error)).toContain("LLM_BAD_OUTPUT");
    expect(doc.metadata.extract).toMatchObject({ provider: "llm" });
  });

  it("429 then success: waits as Retry-After says, then answers", async () => {
    replies = [status(429, { "retry-after": "1" }), ok(JSON.stringify({ data: { name: "Lamp", price: 12.5 } }))];
    const t0 = Date.now();
    const r = await new LlmProvider(new LlmClient(settings(), log)).json(input, { schema });
    expect(r.data).toEqual({ name: "Lamp", price: 12.5 });
    expect(seen).toHaveLength(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it("5xx on every attempt: retries exhausted -> LLM_HTTP_ERROR; a 400 is not retried", async () => {
    replies = [status(503), status(502), status(500)];
    await expect(new LlmClient(settings(), log).complete([{ role: "user", content: "x" }])).rejects.toMatchObject({ code: "LLM_HTTP_ERROR", statusCode: 500 });
    expect(seen).toHaveLength(3);
    seen = [];
    replies = [status(400)];
    await expect(new LlmClient(settings(), log).complete([{ role: "user", content: "x" }])).rejects.toBeInstanceOf(PageError);
    expect(seen).toHaveLength(1);
  });

  it("time-out: a server that never answers fails with LLM_TIMEOUT within the limit", async () => {
    replies = [() => undefined];
    const t0 = Date.now();
    await expect(new LlmClient(settings({ timeoutMs: 300 }), log).complete([{ role: "user", content: "x" }])).rejects.toMatchObject({ code: "LLM_TIMEOUT" });
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it("bounded concurrency: never more calls at once than LLM_CONCURRENCY", async () => {
    const slow: Reply = (_r, res) => void setTimeout(() => res.writeHead(200, { "content-type": "application/json" }).end(completion("hi")), 100);
    replies = [slow, slow, slow, slow, slow];
    const client = new LlmClient(settings({ concurrency: 2 }), log);
    const out = await Promise.all([1, 2, 3, 4, 5].map(() => client.complete([{ role: "user", content: "x" }])));
    expect(out.map((c) => c.content)).toEqual(["hi", "hi", "hi", "hi", "hi"]);
    expect(maxInFlight).toBe(2);
  });

  it("the markdown is cut to the token budget", async () => {
    replies = [ok(JSON.stringify({ data: { name: "Lamp", price: 1 } }))];
    const long = { ...input, markdown: "word ".repeat(5000) };
    const r = await new LlmProvider(new LlmClient(settings({ maxInputTokens: 300 }), log)).json(long, { schema });
    const sent = JSON.stringify(seen[0]?.body.messages);
    expect(sent.length).toBeLessThan(300 * 4 + 1500);
    expect(r.warnings.join(" ")).toContain("cut to 300 tokens");
  });
});
