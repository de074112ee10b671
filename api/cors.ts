// CORS, off by default: without CORS_ALLOWED_ORIGINS no response carries CORS headers, so a web page in the
// operator's browser cannot read the API's answers nor send it anything but "simple" requests (which the body
// parser refuses: bodies must be application/json). `*` allows every origin, explicitly.
import type { Context, Next } from "koa";
import { ConfigError } from "../pipeline/runtime/config.ts";

export interface CorsPolicy {
  any: boolean;
  origins: Set<string>;
}

/** CORS_ALLOWED_ORIGINS: "" (no CORS), "*", or comma-separated origins like https://app.example.com:8443. */
export function parseCorsOrigins(spec: string): CorsPolicy {
  const policy: CorsPolicy = { any: false, origins: new Set() };
  for (const item of spec.split(",").map((x) => x.trim()).filter(Boolean)) {
    if (item === "*") {
      policy.any = true;
      continue;
    }
    const origin = URL.canParse(item) ? new URL(item).origin : "";
    if (origin === "null" || origin !== item.replace(/\/$/, "").toLowerCase()) {
      throw new ConfigError(`config: CORS_ALLOWED_ORIGINS entry ${JSON.stringify(item)} is invalid: expected * or an origin like https://app.example.com (scheme, host, optional port; no path)`);
    }
    policy.origins.add(origin);
  }
  return policy;
}

export function corsMiddleware(policy: CorsPolicy) {
  const enabled = policy.any || policy.origins.size > 0;
  return async (ctx: Context, next: Next) => {
    const origin = ctx.get("origin");
    const allowed = enabled && origin !== "" && (policy.any || policy.origins.has(origin));
    if (enabled) ctx.vary("Origin");
    if (allowed) {
      ctx.set("Access-Control-Allow-Origin", policy.any ? "*" : origin);
      ctx.set("Access-Control-Allow-Headers", "Authorization, Content-Type, x-idempotency-key");
      ctx.set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS");
      if (ctx.method === "OPTIONS") {
        ctx.set("Access-Control-Max-Age", "600");
        ctx.status = 204;
        return;
      }
    }
    await next();
  };
}
