// HTTP errors in the anchor's (Firecrawl v2) body shapes, mapped in one place.
import { randomUUID } from "node:crypto";
import type { Context, Next } from "koa";
import type { Logger } from "../pipeline/runtime/logger.ts";
import { TrawlError } from "../pipeline/runtime/errors.ts";

export interface Issue {
  code: string;
  path: (string | number)[];
  message: string;
  keys?: string[];
}

/** An error whose body is shown to the client as is. */
export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  constructor(status: number, body: Record<string, unknown>) {
    super(String(body.error ?? status));
    this.status = status;
    this.body = body;
  }
}

export const badRequest = (details: Issue[], error = "Bad Request") =>
  new HttpError(400, { success: false, code: "BAD_REQUEST", error, details });

/** 405 with the Allow header: the path exists, not with this method. */
export function methodNotAllowed(ctx: Context, allowed: string[]): HttpError {
  ctx.set("Allow", allowed.join(", "));
  return new HttpError(405, { success: false, error: `Method not allowed: ${ctx.method} ${ctx.path} (allowed: ${allowed.join(", ")})` });
}

export const jobNotFound = () => new HttpError(404, { success: false, error: "Job not found" });

export function errorMiddleware(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.body = err.body;
        return;
      }
      const status = (err as { status?: number }).status;
      if (status === 413) {
        ctx.status = 413;
        ctx.body = { success: false, code: "PAYLOAD_TOO_LARGE", error: "Request body larger than 10 MB" };
        return;
      }
      const exceptionId = randomUUID();
      if (err instanceof TrawlError && err.retriable) {
        log.warn({ err, exceptionId, path: ctx.path }, "dependency unavailable");
        ctx.status = 503;
        ctx.body = { success: false, code: err.code, error: `A dependency is unavailable; retry shortly. Your exception ID is ${exceptionId}` };
        return;
      }
      log.error({ err, exceptionId, path: ctx.path }, "unhandled error");
      ctx.status = 500;
      ctx.body = { success: false, code: "UNKNOWN_ERROR", error: `An unexpected error occurred. Your exception ID is ${exceptionId}` };
    }
  };
}
