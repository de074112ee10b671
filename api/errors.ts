// HTTP errors in the anchor's (Firecrawl v2) body shapes. Every error body the API writes is built here.
import { randomUUID } from "node:crypto";
import type { Context, Next } from "koa";
import type { Logger } from "../pipeline/runtime/logger.ts";
import { RequestError, TrawlError, type RequestIssue } from "../pipeline/runtime/errors.ts";
import { CreditsError } from "../pipeline/usecases/team-access.ts";
import { redactPath } from "./admin-key.ts";

export type Issue = RequestIssue;

/** An error whose body is shown to the client as is. */
export class HttpError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** Response headers that go with it (Retry-After) */
  readonly headers: Record<string, string>;
  constructor(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    super(String(body.error ?? status));
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** The anchor's usual error body: `{success:false, code?, error, details?}`. */
export const apiError = (status: number, error: string, extra: { code?: string; details?: Issue[] } = {}) =>
  new HttpError(status, { success: false, ...(extra.code ? { code: extra.code } : {}), error, ...(extra.details ? { details: extra.details } : {}) });

export const badRequest = (details: Issue[], error = "Bad Request") => apiError(400, error, { code: "BAD_REQUEST", details });
export const jobNotFound = () => apiError(404, "Job not found");
export const jobExpired = () => apiError(404, "Job expired");
export const invalidJobId = () => apiError(400, "Invalid job ID format. Job ID must be a valid UUID.");
export const invalidPagination = (why: string) => apiError(400, `Invalid pagination: ${why}`);
/** 405 with the Allow header: the path exists, not with this method. */
export function methodNotAllowed(ctx: Context, allowed: string[]): HttpError {
  ctx.set("Allow", allowed.join(", "));
  return apiError(405, `Method not allowed: ${ctx.method} ${ctx.path} (allowed: ${allowed.join(", ")})`);
}
export const routeNotFound = (method: string, path: string) => apiError(404, `Not found: ${method} ${path}`);
export const payloadTooLarge = () => apiError(413, "Request body larger than 10 MB", { code: "PAYLOAD_TOO_LARGE" });
export const unsupportedMediaType = (got: string) =>
  apiError(415, `Content-Type must be application/json (got ${JSON.stringify(got || "none")})`, { code: "UNSUPPORTED_MEDIA_TYPE" });
export const tooDeep = (max: number) => apiError(400, `Bad request, JSON nested deeper than ${max} levels`, { code: "BAD_REQUEST" });
export const invalidJson = () => apiError(400, "Bad request, malformed JSON", { code: "BAD_REQUEST_INVALID_JSON" });

/** 429 with Retry-After, in the words of the anchor's rate limit (`Rate limit exceeded…`). */
export const rateLimited = (why: string, retryAfterS: number) =>
  new HttpError(429, { success: false, code: "RATE_LIMIT_EXCEEDED", error: `Rate limit exceeded: ${why}. Please retry after ${retryAfterS}s.` }, { "Retry-After": String(retryAfterS) });

/** DELETE /v2/crawl/:id errors carry no `success` field: the anchor's documented inconsistency, kept on purpose. */
export const cancelError = (status: 404 | 409, error: string) => new HttpError(status, { error });

export function errorMiddleware(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof HttpError) {
        ctx.set(err.headers);
        ctx.status = err.status;
        ctx.body = err.body;
        return;
      }
      if (err instanceof CreditsError) {
        ctx.status = 402;
        ctx.body = { success: false, error: err.message };
        return;
      }
      if (err instanceof RequestError) {
        const { status, body } = badRequest(err.issues, err.message);
        ctx.status = status;
        ctx.body = body;
        return;
      }
      const status = (err as { status?: number }).status;
      if (status === 413) {
        const { body } = payloadTooLarge();
        ctx.status = 413;
        ctx.body = body;
        return;
      }
      const exceptionId = randomUUID();
      if (err instanceof TrawlError && err.retriable) {
        log.warn({ err, exceptionId, path: redactPath(ctx.path) }, "dependency unavailable");
        ctx.status = 503;
        ctx.body = { success: false, code: err.code, error: `A dependency is unavailable; retry shortly. Your exception ID is ${exceptionId}` };
        return;
      }
      log.error({ err, exceptionId, path: redactPath(ctx.path) }, "unhandled error");
      ctx.status = 500;
      ctx.body = { success: false, code: "UNKNOWN_ERROR", error: `An unexpected error occurred. Your exception ID is ${exceptionId}` };
    }
  };
}
