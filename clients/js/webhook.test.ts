import { describe, expect, it } from "vitest";
import { signWebhookBody, verifyWebhookSignature } from "./webhook.ts";

describe("verifyWebhookSignature", () => {
  const body = '{"success":true,"type":"crawl.page","id":"x","data":[]}';
  const sig = signWebhookBody(body, "s3cret");
  it("accepts the signature of the exact body", () => {
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(body, sig, "s3cret")).toBe(true);
    expect(verifyWebhookSignature(Buffer.from(body), sig, "s3cret")).toBe(true);
  });
  it("rejects a tampered body, another secret, and malformed headers", () => {
    expect(verifyWebhookSignature(body.replace("x", "y"), sig, "s3cret")).toBe(false);
    expect(verifyWebhookSignature(body + " ", sig, "s3cret")).toBe(false);
    expect(verifyWebhookSignature(body, sig, "other")).toBe(false);
    for (const bad of [undefined, null, "", "sha256=", "sha1=abc", sig.slice(0, -1), sig + "0"]) expect(verifyWebhookSignature(body, bad, "s3cret")).toBe(false);
  });
});
