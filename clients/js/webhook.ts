// Verifying a Trawl webhook: X-Service-Signature is `sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>`.
// Compute over the raw bytes as received (not re-serialised JSON) and compare in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";

export function signWebhookBody(body: string | Buffer, secret: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

/** True when `signature` (the header value) matches `body` under `secret`. Never throws on malformed input. */
export function verifyWebhookSignature(body: string | Buffer, signature: string | undefined | null, secret: string): boolean {
  if (!signature || !secret) return false;
  const expected = Buffer.from(signWebhookBody(body, secret));
  const given = Buffer.from(signature.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
