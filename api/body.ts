// JSON request bodies: 10 MB cap, malformed JSON -> 400 BAD_REQUEST_INVALID_JSON.
import type { Context, Next } from "koa";
import { invalidJson, payloadTooLarge } from "./errors.ts";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export async function readBody(ctx: Context): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) {
      throw payloadTooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  if (ctx.method === "POST" || ctx.method === "PUT" || ctx.method === "PATCH") {
    const text = await readBody(ctx);
    try {
      ctx.state.body = text.trim() === "" ? {} : JSON.parse(text);
    } catch {
      throw invalidJson();
    }
  }
  await next();
}
