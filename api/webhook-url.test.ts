import { describe, expect, it } from "vitest";
import { checkWebhookUrl } from "./webhook-url.ts";

describe("checkWebhookUrl", () => {
  // found by Schemathesis: these passed the schema, and each delivery then failed with a TypeError (dead-lettered)
  it("refuses URLs the schema's uri format admits but the URL parser does not", () => {
    for (const url of ["http://a:b", "http://:80", "http://a:99999", "https://"]) {
      expect(() => checkWebhookUrl(url), url).toThrow(/Invalid webhook URL/);
      expect(() => checkWebhookUrl({ url }), url).toThrow(/Invalid webhook URL/);
    }
  });
  it("accepts http(s) URLs", () => {
    expect(() => checkWebhookUrl("https://hooks.example.com/x?y=1")).not.toThrow();
    expect(() => checkWebhookUrl({ url: "http://127.0.0.1:9/hook" })).not.toThrow();
    expect(() => checkWebhookUrl(undefined)).not.toThrow();
  });
});
