// Webhook payloads, pure: which events a crawl's webhook wants, the body it receives, and its signature.
import { createHmac } from "node:crypto";
import type { CrawlEvent, Webhook, WebhookDelivery } from "../../schemas/index.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";

export interface WebhookSetting {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  /** short names: started, page, completed, failed, cancelled */
  events: string[];
}

/** The anchor's default: every event but cancelled. */
export const DEFAULT_EVENTS = ["started", "page", "completed", "failed"];

/** The crawl's webhook setting (stored as the JSON of the request's `webhook`), or null. */
export function parseWebhook(json: string): WebhookSetting | null {
  if (!json) return null;
  const w = JSON.parse(json) as Webhook;
  if (typeof w === "string") return { url: w, headers: {}, metadata: {}, events: DEFAULT_EVENTS };
  return { url: w.url, headers: w.headers ?? {}, metadata: (w.metadata as Record<string, unknown>) ?? {}, events: w.events ?? DEFAULT_EVENTS };
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
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { ...setting.headers, "content-type": "application/json", "x-trawl-event-id": `${e.crawlId}:${eventId(e)}` };
  if (secret) {
    headers["x-service-signature"] = signature(body, secret);
    headers["x-firecrawl-signature"] = headers["x-service-signature"];
  }
  return { crawlId: e.crawlId, eventId: eventId(e), event: type, url: setting.url, headers, body, attempt: 1, notBefore: now };
}

/** Wait before attempt `attempt + 1` (the last delay repeats). */
export function retryDelay(delaysMs: number[], attempt: number): number {
  return delaysMs[Math.min(attempt - 1, delaysMs.length - 1)] ?? 60_000;
}
