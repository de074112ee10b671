import { describe, expect, it } from "vitest";
import { firstDelivery, parseWebhook, type WebhookSetting } from "./payload.ts";

const setting = parseWebhook(JSON.stringify({ url: "https://hooks.test/x", metadata: { project: "p" } })) as WebhookSetting;

describe("webhook payload", () => {
  it("is the anchor's body plus the job's team", () => {
    const d = firstDelivery({ crawlId: "c1", teamId: "team-a", type: "crawl.started", at: 1 }, setting, "", 1, "other");
    expect(JSON.parse(d?.body ?? "")).toEqual({ success: true, type: "crawl.started", id: "c1", teamId: "team-a", data: [], metadata: { project: "p" }, error: null });
  });

  it("names the crawl record's team for an event written before events carried it, else the anonymous team", () => {
    const old = { crawlId: "c1", type: "crawl.completed" as const, at: 1 };
    expect(JSON.parse(firstDelivery(old, setting, "", 1, "team-b")?.body ?? "").teamId).toBe("team-b");
    expect(JSON.parse(firstDelivery(old, setting, "", 1)?.body ?? "").teamId).toBe("bypass");
  });

  it("carries a change-tracking job's summary on completed, and nothing more for other jobs", () => {
    const summary = { new: 1, same: 2, changed: 3, removed: 4 };
    const done = { crawlId: "c1", teamId: "t", type: "crawl.completed" as const, at: 1, kind: "batch" as const, changeTracking: summary };
    const body = JSON.parse(firstDelivery(done, setting, "", 1)?.body ?? "");
    expect(body).toMatchObject({ type: "batch_scrape.completed", changeTracking: summary });
    expect(JSON.parse(firstDelivery({ crawlId: "c1", type: "crawl.completed", at: 1 }, setting, "", 1)?.body ?? "")).not.toHaveProperty("changeTracking");
  });
});
