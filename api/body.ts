// JSON request bodies: application/json only (415 otherwise: a cross-site form or text/plain POST never reaches a
// route), 10 MB cap, nesting at most MAX_JSON_DEPTH deep (pipeline/runtime/json-depth.ts), malformed JSON -> 400 BAD_REQUEST_INVALID_JSON.
import type { Context, Next } from "koa";
import { invalidJson, payloadTooLarge, tooDeep, unsupportedMediaType } from "./errors.ts";
import { JsonTooDeepError, parseJsonText } from "../pipeline/runtime/json-depth.ts";

export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export async function readBody(ctx: Context): Promise<string> {
  return (await readBytes(ctx, MAX_BODY_BYTES, payloadTooLarge)).toString("utf8");
}

/**
 * The request body, refused with `tooLarge()` as soon as it passes `max` bytes (never read whole first). `deadline`:
 * a body not read whole within `ms` is refused with `error()` and its connection closed (a client that sends an upload
 * a byte at a time would otherwise hold its upload slot for as long as the server's request timeout).
 */
export async function readBytes(ctx: Context, max: number, tooLarge: () => Error, deadline?: { ms: number; error: () => Error }): Promise<Buffer> {
  if (ctx.request.length > max) throw tooLarge();
  let late: Error | undefined;
  const timer = deadline && setTimeout(() => {
    late = deadline.error();
    ctx.req.destroy();
  }, deadline.ms);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > max) throw tooLarge();
      chunks.push(chunk as Buffer);
    }
  } catch (err) {
    throw late ?? err;
  } finally {
    clearTimeout(timer);
  }
  if (late) throw late;
  return Buffer.concat(chunks);
}

/** Routes whose body is multipart/form-data (an upload): read by the route itself, under its own limit. */
const MULTIPART_ROUTES = new Set(["/v2/parse"]);

/** JSON text from a client, under the one nesting limit (checked before parsing): 400 when too deep or malformed. */
export function parseClientJson(text: string): unknown {
  try {
    return parseJsonText(text);
  } catch (err) {
    if (err instanceof JsonTooDeepError) throw tooDeep(err.max);
    throw invalidJson();
  }
}

export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  // (any method: another one than the route's gets its 405, not a 415 for the upload's type)
  if (MULTIPART_ROUTES.has(ctx.path) && ctx.is("multipart/form-data")) return next();
  if (ctx.method === "POST" || ctx.method === "PUT" || ctx.method === "PATCH") {
    // null: the request has no body (treated as {}); false: a body of another type
    if (ctx.is("application/json") === false && ctx.request.length !== 0) {
      throw unsupportedMediaType(ctx.get("content-type"));
    }
    const text = await readBody(ctx);
    ctx.state.body = text.trim() === "" ? {} : parseClientJson(text);
  }
  await next();
}
