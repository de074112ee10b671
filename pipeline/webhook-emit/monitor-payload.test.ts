import { describe, expect, it } from "vitest";
import type { CrawlEvent } from "../../schemas/index.ts";
import { firstDelivery, parseWebhook, type WebhookSetting } from "./payload.ts";

const hook = (events?: string[]) => parseWebhook(JSON.stringify({ url: "https://hooks.test/m", metadata: { a: 1 }, ...(events ? { events } : {}), monitor: "m1" })) as WebhookSetting;
const page = (changeStatus: string | undefined, extra: Record<string, unknown> = {}): CrawlEvent => ({
  crawlId: "check-1", type: "crawl.page", at: 1, seq: 3,
  document: { markdown: "x", metadata: { sourceURL: "https://s.test/p", url: "https://s.test/p", statusCode: 200, scrapeId: "s1" }, ...(changeStatus ? { changeTracking: { previousScrapeAt: null, changeStatus, visibility: "visible", ...extra } } : {}) } as never,
});
const body = (e: CrawlEvent, setting = hook()) => {
  const d = firstDelivery(e, setting, "secret", 1, "team");
  return d ? { event: d.event, ...JSON.parse(d.body) } : null;
};

describe("monitor webhooks", () => {
  it("monitor.page for a new or changed page only, with its diff; nothing for a same page", () => {
    expect(body(page("new"))).toMatchObject({ event: "monitor.page", type: "monitor.page", id: "check-1", metadata: { a: 1 }, data: [{ monitorId: "m1", checkId: "check-1", url: "https://s.test/p", status: "new", currentScrapeId: "s1", diff: null }] });
    const changed = body(page("changed", { diff: { text: "@@ -1 +1 @@\n-a\n+b", json: { files: [] } } }));
    expect(changed?.data[0]).toMatchObject({ status: "changed", diff: { text: "@@ -1 +1 @@\n-a\n+b", json: { files: [] } } });
    expect(body(page("same"))).toBeNull();
    expect(body(page(undefined))).toBeNull();
    expect(body({ crawlId: "check-1", type: "crawl.started", at: 1 })).toBeNull();
  });

  it("monitor.check.completed only for a check that found a change, or failed", () => {
    const done = (c: { new: number; same: number; changed: number; removed: number }): CrawlEvent => ({ crawlId: "check-1", type: "crawl.completed", at: 1, changeTracking: c });
    expect(body(done({ new: 0, same: 4, changed: 0, removed: 0 }))).toBeNull();
    expect(body(done({ new: 0, same: 3, changed: 0, removed: 1 }))).toMatchObject({
      type: "monitor.check.completed", success: true, data: [{ monitorId: "m1", checkId: "check-1", status: "completed", summary: { totalPages: 4, same: 3, removed: 1, new: 0, changed: 0, error: 0 } }],
    });
    expect(body({ crawlId: "check-1", type: "crawl.failed", at: 1, error: "boom" })).toMatchObject({ success: false, error: "boom", data: [{ status: "failed" }] });
  });

  it("sends only the events the webhook asks for, and the same webhookId for the same event", () => {
    expect(body(page("new"), hook(["monitor.check.completed"]))).toBeNull();
    expect(body(page("new"), hook(["monitor.page"]))?.webhookId).toBe(body(page("new"))?.webhookId);
  });
});
