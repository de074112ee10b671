// Who is calling: with USE_DB_AUTHENTICATION every /v2 request carries `Authorization: Bearer <key>` (401 otherwise,
// in the anchor's words) and is rate limited per key (429 with Retry-After); without it every caller is the team
// "bypass". The key is never logged nor echoed.
import type { Context, Next } from "koa";
import type { Caller } from "../pipeline/usecases/api-keys.ts";
import type { TeamAccess } from "../pipeline/usecases/team-access.ts";
import { apiError } from "./errors.ts";

import { TEAM_BYPASS } from "../pipeline/runtime/constants.ts";

export { TEAM_BYPASS };

/** The bearer token of an Authorization header: the text after the first space (the anchor's rule). */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const i = header.indexOf(" ");
  return i < 0 ? "" : header.slice(i + 1).trim();
}

/** Requests per key in the current minute, per process (replicas each count their own share). */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private readonly now: () => number;
  constructor(now: () => number) {
    this.now = now;
  }

  /** Seconds to wait when `caller` is over its limit, else 0 (the request is counted). */
  take(caller: Caller): number {
    if (caller.ratePerMin <= 0) return 0;
    const now = this.now();
    let w = this.windows.get(caller.keyId);
    if (!w || now - w.start >= 60_000) {
      w = { start: now, count: 0 };
      this.windows.set(caller.keyId, w);
    }
    if (w.count >= caller.ratePerMin) return Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    w.count++;
    return 0;
  }
}

/** Resolves the caller of a request from its bearer key; throws the anchor's 401. */
export async function authenticate(access: TeamAccess, header: string | undefined): Promise<Caller> {
  const token = bearerToken(header);
  if (token === undefined) throw apiError(401, "Unauthorized");
  if (token === "") throw apiError(401, "Unauthorized: Token missing");
  const caller = await access.verifier.verify(token);
  if (!caller) throw apiError(401, "Unauthorized: Invalid token");
  return caller;
}

export function authMiddleware(access: TeamAccess | undefined, limiter: RateLimiter) {
  return async (ctx: Context, next: Next) => {
    if (!access || !ctx.path.startsWith("/v2/")) {
      ctx.state.teamId = TEAM_BYPASS;
      return next();
    }
    const caller = await authenticate(access, ctx.get("authorization") || undefined);
    const wait = limiter.take(caller);
    if (wait > 0) {
      ctx.set("Retry-After", String(wait));
      throw apiError(429, `Rate limit exceeded. Consumed (req/min): ${caller.ratePerMin}, Remaining (req/min): 0. Please retry after ${wait}s.`, { code: "RATE_LIMIT_EXCEEDED" });
    }
    ctx.state.teamId = caller.teamId;
    return next();
  };
}
