// The crawl state machine: (state, inbox event, now) -> (state', emissions, rows to persist). Pure: no I/O.
// Completion rule: a stage produces LinksDiscovered(P) and awaits its ack before it sends P onward, so P's links
// always precede P's PageDone in frontier.inbox; the crawl is complete exactly when no URL is outstanding.
import type { CrawlOptions, FetchTask, FrontierInboxMessage, CrawlEvent } from "../../schemas/index.ts";
import type { Emission } from "../runtime/bus.ts";
import { keys } from "../topology.ts";
import type { CrawlRecord, CrawlStatus, ErrorRow, UrlRow, UrlState } from "../store/crawl-store.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import { resolveLink, urlKey } from "./normalize-url.ts";
import { inScope } from "./scope.ts";

export const RETENTION_MS = 24 * 60 * 60 * 1000;

export interface UrlEntry {
  state: UrlState;
  depth: number;
  url: string;
}

export interface CrawlState {
  crawlId: string;
  teamId: string;
  webhook: string;
  startUrl: string;
  options: CrawlOptions;
  status: CrawlStatus;
  /** Version of the last persisted snapshot; every change bumps it. */
  version: number;
  createdAt: number;
  completedAt: number;
  error: string;
  creditsUsed: number;
  urls: Map<string, UrlEntry>;
  queued: number;
  done: number;
  failed: number;
}

export interface Step {
  emissions: Emission[];
  urlRows: UrlRow[];
  errorRows: ErrorRow[];
  /** The crawl record changed and must be persisted. */
  changed: boolean;
}

const empty = (): Step => ({ emissions: [], urlRows: [], errorRows: [], changed: false });

export function keyOf(url: string): string {
  return urlKey(url, { deduplicateSimilarURLs: true });
}

export function newState(msg: Extract<FrontierInboxMessage, { type: "CrawlRequested" }>): CrawlState {
  return {
    crawlId: msg.crawlId,
    teamId: msg.teamId ?? "",
    webhook: msg.webhook ?? "",
    startUrl: msg.url,
    options: msg.options,
    status: "scraping",
    version: 0,
    createdAt: msg.createdAt,
    completedAt: 0,
    error: "",
    creditsUsed: 0,
    urls: new Map(),
    queued: 0,
    done: 0,
    failed: 0,
  };
}

function event(state: CrawlState, type: CrawlEvent["type"], now: number, error: string | null = null): Emission {
  const value: CrawlEvent = { crawlId: state.crawlId, type, at: now, error };
  return { topic: "crawl.events", key: keys.crawl(state.crawlId), value };
}

function setUrl(state: CrawlState, step: Step, key: string, entry: UrlEntry): void {
  const before = state.urls.get(key);
  if (before) {
    if (before.state === URL_STATE.queued) state.queued--;
    else if (before.state === URL_STATE.done) state.done--;
    else state.failed--;
  }
  state.urls.set(key, entry);
  if (entry.state === URL_STATE.queued) state.queued++;
  else if (entry.state === URL_STATE.done) state.done++;
  else state.failed++;
  step.urlRows.push({ crawlId: state.crawlId, urlKey: key, url: entry.url, depth: entry.depth, state: entry.state, version: state.version + 1 });
}

function enqueue(state: CrawlState, step: Step, url: string, depth: number): void {
  const key = keyOf(url);
  setUrl(state, step, key, { state: URL_STATE.queued, depth, url });
  const task: FetchTask = { crawlId: state.crawlId, url, urlKey: key, depth, attempt: 0, options: state.options };
  step.emissions.push({ topic: "fetch.tasks", key: keys.crawlHost(state.crawlId, url), value: task });
}

/** Slots used against `limit`: queued and done URLs (a failed URL frees its slot). */
export function slotsUsed(state: CrawlState): number {
  return state.queued + state.done;
}

function finishIfIdle(state: CrawlState, step: Step, now: number): void {
  if (state.status !== "scraping" || state.queued > 0) return;
  state.completedAt = now;
  if (state.done === 0 && state.failed > 0) {
    state.status = "failed";
    const start = state.urls.get(keyOf(state.startUrl));
    state.error = start && start.state === URL_STATE.failed ? `the start URL could not be crawled: ${state.error || "fetch failed"}` : "no page could be crawled";
    step.emissions.push(event(state, "crawl.failed", now, state.error));
  } else {
    state.status = "completed";
    step.emissions.push(event(state, "crawl.completed", now));
  }
  step.changed = true;
}

/** Applies one inbox event. `state` is null only before CrawlRequested was seen. */
export function reduce(state: CrawlState | null, msg: FrontierInboxMessage, now: number): { state: CrawlState | null; step: Step } {
  const step = empty();
  if (msg.type === "CrawlRequested") {
    if (state) return { state, step }; // replay
    const s = newState(msg);
    enqueue(s, step, msg.url, 0);
    step.emissions.unshift(event(s, "crawl.started", now));
    step.changed = true;
    return { state: s, step };
  }
  if (!state) return { state, step };
  switch (msg.type) {
    case "LinksDiscovered": {
      if (state.status !== "scraping") break;
      for (const href of msg.links) {
        if (slotsUsed(state) >= state.options.limit) break;
        const url = resolveLink(href);
        if (!url) continue;
        const key = keyOf(url);
        if (state.urls.has(key)) continue;
        if (inScope(state.startUrl, url, state.options) !== "ok") continue;
        enqueue(state, step, url, msg.depth + 1);
        step.changed = true;
      }
      break;
    }
    case "PageDone": {
      const entry = state.urls.get(msg.urlKey);
      if (!entry || entry.state !== URL_STATE.queued) break; // duplicate or unknown
      // a page stored just before a cancel is still returned by GET, so it counts and is billed
      setUrl(state, step, msg.urlKey, { ...entry, state: URL_STATE.done });
      state.creditsUsed += msg.credits;
      step.changed = true;
      finishIfIdle(state, step, now);
      break;
    }
    case "PageFailed": {
      const entry = state.urls.get(msg.urlKey);
      if (!entry || entry.state !== URL_STATE.queued) break;
      setUrl(state, step, msg.urlKey, { ...entry, state: URL_STATE.failed });
      step.errorRows.push({
        crawlId: state.crawlId, urlKey: msg.urlKey, url: msg.url, code: msg.code, error: msg.error, statusCode: msg.statusCode ?? 0, at: now,
      });
      if (msg.urlKey === keyOf(state.startUrl)) state.error = `${msg.code}: ${msg.error}`;
      step.changed = true;
      finishIfIdle(state, step, now);
      break;
    }
    case "CancelRequested": {
      if (state.status !== "scraping") break;
      state.status = "cancelled";
      state.completedAt = now;
      step.emissions.push(event(state, "crawl.cancelled", now));
      step.changed = true;
      break;
    }
  }
  return { state, step };
}

/** The crawl record of a state, as persisted after a step. */
export function toRecord(state: CrawlState, now: number): CrawlRecord {
  const terminal = state.status !== "scraping";
  return {
    crawlId: state.crawlId,
    version: state.version,
    teamId: state.teamId,
    url: state.startUrl,
    options: state.options,
    webhook: state.webhook,
    status: state.status,
    total: state.queued + state.done,
    completed: state.done,
    failed: state.failed,
    creditsUsed: state.creditsUsed,
    discoveryDone: true,
    createdAt: state.createdAt,
    updatedAt: now,
    completedAt: state.completedAt,
    expiresAt: (terminal ? state.completedAt : now) + RETENTION_MS,
    error: state.error,
  };
}

/** Rebuilds a crawl's state from its persisted record and URL rows (after a restart of the frontier). */
export function restore(record: CrawlRecord, urls: UrlRow[]): CrawlState {
  const state: CrawlState = {
    crawlId: record.crawlId,
    teamId: record.teamId,
    webhook: record.webhook,
    startUrl: record.url,
    options: record.options,
    status: record.status,
    version: record.version,
    createdAt: record.createdAt,
    completedAt: record.completedAt,
    error: record.error,
    creditsUsed: record.creditsUsed,
    urls: new Map(),
    queued: 0,
    done: 0,
    failed: 0,
  };
  for (const row of urls) {
    state.urls.set(row.urlKey, { state: row.state, depth: row.depth, url: row.url });
    if (row.state === URL_STATE.queued) state.queued++;
    else if (row.state === URL_STATE.done) state.done++;
    else state.failed++;
    state.version = Math.max(state.version, row.version);
  }
  return state;
}
