// Webhook payloads, pure: which events a crawl's webhook wants, the body it receives, and its signature.
import { createHmac } from "node:crypto";
import type { CrawlEvent, Webhook, WebhookDelivery } from "../../schemas/index.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";
import { MONITOR_EVENTS, monitorPayload, type MonitorHook } from "./monitor-payload.ts";

export interface WebhookSetting {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  /** short names: started, page, completed, failed, cancelled */
  events: string[];
  /** a monitor's check: its events become monitor events (monitor-payload.ts) */
  monitor?: MonitorHook;
}

/** The anchor's default: every event but cancelled. */
export const DEFAULT_EVENTS = ["started", "page", "completed", "failed"];

/** The crawl's webhook setting (stored as the JSON of the request's `webhook`), or null. */
export function parseWebhook(json: string): WebhookSetting | null {
  if (!json) return null;
  const w = JSON.parse(json) as Webhook & { monitor?: string };
  if (typeof w === "object" && w.monitor) {
    const events = (w.events as string[] | undefined) ?? MONITOR_EVENTS;
    const metadata = (w.metadata as Record<string, unknown>) ?? {};
    return { url: w.url, headers: w.headers ?? {}, metadata, events, monitor: { monitorId: w.monitor, events, metadata } };
  }
  if (typeof w === "string") return { url: w, headers: {}, metadata: {}, events: DEFAULT_EVENTS };
  return { url: w.url, headers: w.headers ?? {}, metadata: (w.metadata as Record<string, unknown>) ?? {}, events: w.events ?? DEFAULT_EVENTS };
}

/** Whether the webhook sends page events (a monitor's: monitor.page), i.e. needs the document of a page event. */
export function wantsPages(setting: WebhookSetting): boolean {
  if (setting.monitor) return setting.monitor.events.includes("monitor.page");
  return ["page", "crawl.page", "batch_scrape.page"].some((e) => setting.events.includes(e));
}

/** Unique per crawl and event: replays of the same event map to the same id. */
export function eventId(e: CrawlEvent): string {
  return e.type === "crawl.page" ? `${e.type}:${e.seq ?? e.document?.metadata.scrapeId}` : e.type;
}

export function signature(body: string, secret: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * The first attempt of an event's delivery, or null when the webhook does not want this event. The body is the
 * anchor's shape plus `teamId` (the team that owns the job; the event's, else the crawl record's `teamId`), and the
 * `changeTracking` summary of a change-tracking job's completed event.
 */
export function firstDelivery(e: CrawlEvent, setting: WebhookSetting, secret: string, now: number, teamId = TEAM_BYPASS): WebhookDelivery | null {
  if (setting.monitor) return monitorDelivery(e, setting, setting.monitor, secret, now, teamId);
  const short = e.type.slice("crawl.".length);
  // a batch scrape's events are batch_scrape.started / .page / .completed (the anchor's names)
  const type = e.kind === "batch" ? `batch_scrape.${short}` : e.type;
  if (!setting.events.includes(short) && !setting.events.includes(type)) return null;
  const payload = {
    success: e.type !== "crawl.failed",
    type,
    id: e.crawlId,
    teamId: e.teamId ?? teamId,
    data: e.type === "crawl.page" && e.document ? [e.document] : [],
    metadata: setting.metadata,
    error: e.error ?? null,
    // crawl.completed of a job with the changeTracking format: its pages' counts by change status
    ...(e.changeTracking ? { changeTracking: e.changeTracking } : {}),
  };
  return delivery(e, type, payload, setting, secret, now);
}

function delivery(e: CrawlEvent, type: string, payload: Record<string, unknown>, setting: WebhookSetting, secret: string, now: number): WebhookDelivery {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { ...setting.headers, "content-type": "application/json", "x-trawl-event-id": `${e.crawlId}:${eventId(e)}` };
  if (secret) {
    headers["x-service-signature"] = signature(body, secret);
    headers["x-firecrawl-signature"] = headers["x-service-signature"];
  }
  return { crawlId: e.crawlId, eventId: eventId(e), event: type, url: setting.url, headers, body, attempt: 1, notBefore: now };
}

/** A monitor's check: monitor.page / monitor.check.completed, on change only (null otherwise). */
function monitorDelivery(e: CrawlEvent, setting: WebhookSetting, hook: MonitorHook, secret: string, now: number, teamId: string): WebhookDelivery | null {
  const m = monitorPayload(e, hook, eventId(e));
  return m ? delivery(e, m.type, { ...m.payload, teamId: e.teamId ?? teamId }, setting, secret, now) : null;
}

/** Wait before attempt `attempt + 1` (the last delay repeats). */
export function retryDelay(delaysMs: number[], attempt: number): number {
  return delaysMs[Math.min(attempt - 1, delaysMs.length - 1)] ?? 60_000;
}
