// Who is calling: with USE_DB_AUTHENTICATION every /v2 request carries `Authorization: Bearer <key>` (401 otherwise,
// in the anchor's words) and is rate limited per key (429 with Retry-After); without it every caller is the team
// "bypass". The key is never logged nor echoed.
// Only the Bearer scheme carries a key (case-insensitive, as RFC 9110 has schemes): both official SDKs send
// `Authorization: Bearer <key>` (firecrawl-js 4.x, firecrawl-py 4.x, also on their WebSockets; the JS SDK's browser
// WebSocket offers the key as its subprotocol instead, which ws.ts reads). `Basic <key>`, `Token <key>` get the 401.
// Refused credentials are counted per client address (pipeline/usecases/auth-failures.ts): past the limit, 429.
import type { Context, Next } from "koa";
import ipaddr from "ipaddr.js";
import { embeddedIPv4, parseIp } from "../pipeline/net/private-address.ts";
import type { Caller } from "../pipeline/usecases/api-keys.ts";
import type { AttemptGate } from "../pipeline/usecases/key-verifier.ts";
import type { TeamAccess } from "../pipeline/usecases/team-access.ts";
import { apiError, rateLimited } from "./errors.ts";

import { TEAM_BYPASS } from "../pipeline/runtime/constants.ts";

export { TEAM_BYPASS };

/**
 * The key of an Authorization header: undefined without one, "" for `Bearer` alone, null for any other scheme
 * (not a key: refused as a wrong one), else the text after `Bearer `.
 */
export function bearerToken(header: string | undefined): string | null | undefined {
  if (header === undefined) return undefined;
  const m = /^bearer(?:[ \t]+(.*))?$/is.exec(header.trim());
  return m ? (m[1] ?? "").trim() : null;
}

/**
 * The address failed attempts are counted under: the socket's peer, or with TRUST_PROXY the last X-Forwarded-For
 * entry (the one the trusted proxy appended; the first entries are the client's own words). IPv4-mapped IPv6 is its
 * IPv4 address; other IPv6 addresses count per /64 (one host commonly holds a whole /64).
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trustProxy: boolean): string {
  const forwarded = trustProxy ? forwardedFor?.split(",").at(-1)?.trim() : undefined;
  const text = forwarded || peer || "unknown";
  const ip = parseIp(text);
  if (!ip) return text;
  if (ip.kind() === "ipv4") return ip.toString();
  const v6 = ip as ipaddr.IPv6;
  if (v6.range() === "ipv4Mapped") return (embeddedIPv4(v6) as ipaddr.IPv4).toString();
  return `${v6.parts.slice(0, 4).map((p) => p.toString(16)).join(":")}::/64`;
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

/** Resolves the caller of a request from its bearer key; throws the anchor's 401, or 429 when its address is over the limit. */
export async function authenticate(access: TeamAccess, header: string | undefined, address: string): Promise<Caller> {
  const token = bearerToken(header);
  if (token === undefined) throw apiError(401, "Unauthorized");
  if (token === "") throw apiError(401, "Unauthorized: Token missing");
  const gate: AttemptGate = access.failures.gate(address);
  const verdict = await access.verifier.verify(token, gate);
  if (verdict.ok) return verdict.caller;
  if (verdict.reason === "refused") throw apiError(401, "Unauthorized: Invalid token");
  if (verdict.reason === "limited") throw rateLimited("too many refused API keys from your address", verdict.retryAfterS);
  throw rateLimited("too many keys being verified at once", verdict.retryAfterS);
}

export function authMiddleware(access: TeamAccess | undefined, limiter: RateLimiter, trustProxy: boolean) {
  return async (ctx: Context, next: Next) => {
    if (!access || !ctx.path.startsWith("/v2/")) {
      ctx.state.teamId = TEAM_BYPASS;
      return next();
    }
    const address = clientAddress(ctx.req.socket.remoteAddress, ctx.get("x-forwarded-for") || undefined, trustProxy);
    const caller = await authenticate(access, ctx.get("authorization") || undefined, address);
    const wait = limiter.take(caller);
    if (wait > 0) {
      ctx.set("Retry-After", String(wait));
      throw apiError(429, `Rate limit exceeded. Consumed (req/min): ${caller.ratePerMin}, Remaining (req/min): 0. Please retry after ${wait}s.`, { code: "RATE_LIMIT_EXCEEDED" });
    }
    ctx.state.teamId = caller.teamId;
    return next();
  };
}
