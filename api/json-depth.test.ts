// The one JSON nesting limit (pipeline/runtime/json-depth.ts) on a real HTTP server: JSON bodies, /v2/parse's
// `options` part and the JSON schemas inside either are refused with the anchor's 400 before anything parses them
// (a 200,000-level options part answered 500 after holding the event loop for seconds).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { MAX_JSON_DEPTH } from "../pipeline/runtime/json-depth.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { createApp } from "./app.ts";

let server: Server;
let base = "";

beforeAll(async () => {
  const app = createApp({
    config: loadConfig({}), log: createLogger("silent"), clock: { now: () => Date.now() }, ready: async () => true,
    // every request here is refused before it reaches a store, the bus or a converter
    store: {} as never, bus: {} as never, fetcher: {} as never, convert: {} as never, robots: {} as never, searchBackend: {} as never,
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const nested = (levels: number, inner = "1") => "[".repeat(levels) + inner + "]".repeat(levels);
/** A JSON schema `levels` objects deep (each level is two: the schema and its `properties`). */
const deepSchema = (levels: number): string => {
  let s = '{"type":"string"}';
  for (let i = 0; i < levels; i++) s = `{"type":"object","properties":{"a":${s}}}`;
  return s;
};

async function parseUpload(options: string): Promise<{ status: number; body: any }> {
  const form = new FormData();
  form.append("options", options);
  form.append("file", new Blob(["<html><body><p>Hello</p></body></html>"], { type: "text/html" }), "a.html");
  const res = await fetch(`${base}/v2/parse`, { method: "POST", body: form });
  return { status: res.status, body: await res.json() };
}

async function postText(path: string, text: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: text });
  return { status: res.status, body: await res.json() };
}

const TOO_DEEP = { success: false, code: "BAD_REQUEST", error: `Bad request, JSON nested deeper than ${MAX_JSON_DEPTH} levels` };

describe("JSON nesting limit", () => {
  it("/v2/parse: a deep options part is a 400 in the anchor's shape, however deep", async () => {
    for (const levels of [MAX_JSON_DEPTH + 1, 3_000, 200_000]) {
      const { status, body } = await parseUpload(`{"formats":${nested(levels, '"markdown"')}}`);
      expect({ levels, status, body }).toEqual({ levels, status: 400, body: TOO_DEEP });
    }
  });

  it("/v2/parse: a JSON schema in the options part deeper than the limit is a 400", async () => {
    const { status, body } = await parseUpload(`{"formats":[{"type":"json","schema":${deepSchema(MAX_JSON_DEPTH)}}]}`);
    expect({ status, body }).toEqual({ status: 400, body: TOO_DEEP });
  });

  it("JSON bodies: deep nesting and a deep schema in formats are the same 400; malformed stays BAD_REQUEST_INVALID_JSON", async () => {
    const deep = await postText("/v2/scrape", `{"url":"https://example.com","formats":${nested(200_000)}}`);
    expect({ status: deep.status, body: deep.body }).toEqual({ status: 400, body: TOO_DEEP });
    const schema = await postText("/v2/scrape", `{"url":"https://example.com","formats":[{"type":"json","schema":${deepSchema(MAX_JSON_DEPTH)}}]}`);
    expect({ status: schema.status, body: schema.body }).toEqual({ status: 400, body: TOO_DEEP });
    const malformed = await postText("/v2/scrape", `{"url":`);
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("BAD_REQUEST_INVALID_JSON");
  });
});
