// Webhook payloads of a monitor's check, pure (Firecrawl's monitor.page and monitor.check.completed bodies). A check
// is a crawl or batch scrape whose stored webhook names its monitor; its events become monitor events, on change
// only: monitor.page for a page found new or changed (not for same pages), monitor.check.completed when the check
// found new, changed or removed pages, or failed. The payload's `id` and `checkId` are the job's id.
import { createHash } from "node:crypto";
import type { CrawlEvent } from "../../schemas/index.ts";

export interface MonitorHook {
  monitorId: string;
  events: string[];
  metadata: Record<string, unknown>;
}

export const MONITOR_EVENTS = ["monitor.page", "monitor.check.completed"];

/** A stable delivery id per check and event (a replayed event is handed once anyway; this keeps retries alike). */
const webhookId = (crawlId: string, event: string): string => {
  const h = createHash("sha256").update(`${crawlId}\n${event}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** The monitor event an event of a check becomes (type and body), or null when it is not one to send. */
export function monitorPayload(e: CrawlEvent, hook: MonitorHook, eventKey: string): { type: string; payload: Record<string, unknown> } | null {
  const base = { monitorId: hook.monitorId, checkId: e.crawlId };
  if (e.type === "crawl.page") {
    const doc = e.document;
    const ct = doc?.changeTracking as { changeStatus?: string; diff?: { text?: string; json?: unknown }; json?: unknown } | undefined;
    if (!doc || !hook.events.includes("monitor.page") || (ct?.changeStatus !== "new" && ct?.changeStatus !== "changed")) return null;
    const diff = ct.changeStatus === "changed" && (ct.diff || ct.json) ? { ...(ct.diff?.text !== undefined ? { text: ct.diff.text } : {}), ...(ct.json ?? ct.diff?.json ? { json: ct.json ?? ct.diff?.json } : {}) } : null;
    const data = {
      ...base, url: doc.metadata.sourceURL ?? doc.metadata.url ?? "", status: ct.changeStatus, previousScrapeId: null, currentScrapeId: doc.metadata.scrapeId ?? null,
      error: null, isMeaningful: null, judgment: null, diff,
    };
    return { type: "monitor.page", payload: { success: true, type: "monitor.page", id: e.crawlId, webhookId: webhookId(e.crawlId, eventKey), data: [data], metadata: hook.metadata } };
  }
  if (!hook.events.includes("monitor.check.completed")) return null;
  if (e.type === "crawl.completed") {
    const c = e.changeTracking ?? { new: 0, same: 0, changed: 0, removed: 0 };
    if (c.new + c.changed + c.removed === 0) return null;
    const summary = { totalPages: c.new + c.same + c.changed + c.removed, same: c.same, changed: c.changed, new: c.new, removed: c.removed, error: 0 };
    return { type: "monitor.check.completed", payload: { success: true, type: "monitor.check.completed", id: e.crawlId, webhookId: webhookId(e.crawlId, eventKey), data: [{ ...base, status: "completed", summary }], metadata: hook.metadata } };
  }
  if (e.type === "crawl.failed") {
    const summary = { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 };
    return {
      type: "monitor.check.completed",
      payload: { success: false, type: "monitor.check.completed", id: e.crawlId, webhookId: webhookId(e.crawlId, eventKey), data: [{ ...base, status: "failed", summary }], error: e.error ?? "the check failed", metadata: hook.metadata },
    };
  }
  return null;
}
