// The queue admin UI's key (BULL_AUTH_KEY): off loopback it must be a real secret, and it is never logged
// (it is part of the admin URL's path, so every logged path goes through redactPath).
import ipaddr from "ipaddr.js";
import { ConfigError } from "../pipeline/runtime/config.ts";
import { embeddedIPv4, parseIp } from "../pipeline/net/private-address.ts";

export const ADMIN_KEY_MIN_LENGTH = 16;
const KNOWN_WEAK = new Set(["changeme", "change-me", "change_me", "password", "secret", "admin", "bullauthkey", "bull_auth_key"]);

/** True for localhost and loopback addresses (127/8, ::1, and IPv6 forms of 127/8). 0.0.0.0 and :: are not. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return true;
  const ip = parseIp(h);
  if (!ip) return false;
  if (ip.kind() === "ipv6") {
    const v4 = embeddedIPv4(ip as ipaddr.IPv6);
    if (v4 && (ip as ipaddr.IPv6).range() === "ipv4Mapped") return v4.range() === "loopback";
    return ip.range() === "loopback";
  }
  return ip.range() === "loopback";
}

/** Why `key` is too weak to guard a publicly bound admin UI, or null. Never includes the key itself. */
export function adminKeyWeakness(key: string): string | null {
  if (KNOWN_WEAK.has(key.toLowerCase())) return "it is a default or well-known value";
  if (key.length < ADMIN_KEY_MIN_LENGTH) return `it has ${key.length} characters, fewer than ${ADMIN_KEY_MIN_LENGTH}`;
  if (new Set(key).size < 8) return "it has fewer than 8 distinct characters";
  if (!/^[A-Za-z0-9._~-]+$/.test(key)) return "it has characters that are not URL-safe (use letters, digits, . _ ~ -)";
  return null;
}

/** Stops the start when the API binds off loopback with a weak admin key. */
export function checkAdminKey(host: string, key: string): void {
  if (isLoopbackHost(host)) return;
  const why = adminKeyWeakness(key);
  if (why) {
    throw new ConfigError(
      `config: BULL_AUTH_KEY is too weak while HOST=${host} is not a loopback address: ${why}. ` +
        `Set a random key of at least ${ADMIN_KEY_MIN_LENGTH} URL-safe characters (e.g. \`openssl rand -hex 24\`)`,
    );
  }
}

/** A request path fit for logs: the admin key in /admin/<key>/... is replaced. */
export function redactPath(path: string): string {
  return path.replace(/^\/admin\/[^/]+/, "/admin/[redacted]");
}
