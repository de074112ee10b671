// The crawl state machine: (state, inbox event, now) -> (state', emissions, rows to persist). Pure: no I/O.
// Completion rule: a stage produces LinksDiscovered(P) and awaits its ack before it sends P onward, so P's links
// always precede P's PageDone in frontier.inbox; the discover task (robots.txt, sitemaps) does the same before
// DiscoveryDone. The crawl is complete exactly when discovery is done and no URL is outstanding.
import type { CrawlOptions, FetchTask, FrontierInboxMessage, CrawlEvent, TeamAdmissionMessage } from "../../schemas/index.ts";
import type { Emission } from "../runtime/bus.ts";
import { keys } from "../topology.ts";
import type { CrawlRecord, CrawlStatus, ErrorRow, UrlRow, UrlState } from "../store/crawl-store.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import { crawlUrlKey, resolveLink } from "../url/normalize-url.ts";
import { politenessKey } from "../url/politeness-key.ts";
import { FROM_SITEMAP } from "../store/url-reason.ts";
import { failureReason, linkSkip, newUrlLog, noteDuplicate, noteQueued, noteSkip, restoreUrlLog, scopeSkip, URL_LOG_MAX, type UrlLog } from "./url-log.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";
import { ROBOTS_BLOCKED } from "../runtime/errors.ts";
import { UrlTable } from "./url-table.ts";


/** One URL's state packed in a number (state in the low 2 bits, depth above), kept in the UrlTable (≤ 16 bytes a URL). */
const pack = (state: UrlState, depth: number) => (depth << 2) | state;
export const stateOf = (packed: number) => (packed & 3) as UrlState;
export const depthOf = (packed: number) => packed >>> 2;

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
  tokensUsed: number;
  /** url key (its 64-bit fingerprint) -> packed state and depth; the URL text is in the store's rows (url-table.ts) */
  urls: UrlTable;
  queued: number;
  done: number;
  failed: number;
  /** URLs robots.txt disallowed (failed, but not the crawl's fault) */
  blocked: number;
  /** The discover task (robots.txt, sitemaps) has not reported yet. */
  discovering: boolean;
  /**
   * In-scope URLs found while `limit` was full, oldest first (bounded, memory only): a failed URL frees its slot
   * and the next of these takes it.
   */
  backlog: { url: string; depth: number; from: string }[];
  /** When an inbox event last changed the state (memory only; a restored state starts from its record's time). */
  progressAt: number;
  /** Times its outstanding work was sent again since that progress (reissue.ts). */
  reissues: number;
  /** The URLs it skipped, and why (url-log.ts) */
  log: UrlLog;
}

export const BACKLOG_MAX = 10_000;

export { toRecord } from "./crawl-record.ts";

export interface Step {
  emissions: Emission[];
  urlRows: UrlRow[];
  errorRows: ErrorRow[];
  /** The crawl record changed and must be persisted. */
  changed: boolean;
}

const empty = (): Step => ({ emissions: [], urlRows: [], errorRows: [], changed: false });

export const isBatch = (state: CrawlState) => state.options.kind === "batch";

/**
 * Held by its team's concurrency limit: queued (team.admission), not yet admitted. A held job records its URLs as
 * queued but sends no fetch task; Admitted sends them.
 */
export const isHeld = (state: CrawlState) => state.options.teamQueue !== undefined && state.options.teamQueue.admittedAt === undefined;

function jobQueued(state: CrawlState, at: number): Emission {
  const value: TeamAdmissionMessage = { type: "JobQueued", teamId: teamOf(state), crawlId: state.crawlId, at };
  return { topic: "team.admission", key: keys.team(teamOf(state)), value };
}

/** A fetch task, unless the job is held (its queued URLs are sent when it is admitted). */
function send(state: CrawlState, step: Step, task: Emission): void {
  if (!isHeld(state)) step.emissions.push(task);
}

/** A batch seed's key: unique per request and position (a batch never deduplicates), stable across replays. */
export const seedKey = (prefix: string, index: number, url: string, options: CrawlOptions) => `${prefix}.${index} ${keyOf(url, options)}`;

export function keyOf(url: string, options: CrawlOptions): string {
  return crawlUrlKey(url, options);
}

/** The team a crawl's messages name: a record from before teams were recorded belongs to the anonymous team. */
export const teamOf = (state: CrawlState) => state.teamId || TEAM_BYPASS;

const TERMINAL_EVENTS = new Set<CrawlEvent["type"]>(["crawl.completed", "crawl.failed", "crawl.cancelled"]);

/** Terminal events go out in phase 1, after the frontier persisted the state that explains them. */
function event(state: CrawlState, type: CrawlEvent["type"], now: number, error: string | null = null): Emission {
  const value: CrawlEvent = { crawlId: state.crawlId, teamId: teamOf(state), type, at: now, error, ...(isBatch(state) ? { kind: "batch" as const } : {}) };
  return { topic: "crawl.events", key: keys.crawl(state.crawlId), value, phase: TERMINAL_EVENTS.has(type) ? 1 : 0 };
}

/** The end of a crawl, announced again when the message that ended it is replayed (its first announcement may be lost). */
function reannounce(state: CrawlState, step: Step, now: number): void {
  if (state.status === "completed") step.emissions.push(event(state, "crawl.completed", now));
  else if (state.status === "failed") step.emissions.push(event(state, "crawl.failed", now, state.error));
}

function count(state: CrawlState, s: UrlState, delta: number): void {
  if (s === URL_STATE.queued) state.queued += delta;
  else if (s === URL_STATE.done) state.done += delta;
  else if (s === URL_STATE.failed) state.failed += delta;
  else state.blocked += delta;
}

function setUrl(state: CrawlState, step: Step, key: string, s: UrlState, depth: number, url: string, why: Partial<UrlRow>): void {
  const before = state.urls.set(key, pack(s, depth));
  if (before !== undefined) count(state, stateOf(before), -1);
  count(state, s, 1);
  step.urlRows.push({ crawlId: state.crawlId, urlKey: key, url, depth, state: s, version: state.version + 1, ...why });
}

function fetchTask(state: CrawlState, url: string, urlKey: string, depth: number, kind: "page" | "discover"): Emission {
  const task: FetchTask = { crawlId: state.crawlId, teamId: teamOf(state), url, urlKey, depth, attempt: 0, options: state.options, kind, startUrl: state.startUrl };
  // keyed by host: one fetch-render replica owns a host for every crawl (POLITENESS_SCOPE=domain: frontier.ts re-keys)
  return { topic: "fetch.tasks", key: keys.politeness(politenessKey(url)), value: task };
}

function enqueue(state: CrawlState, step: Step, url: string, depth: number, from: string, listMax = URL_LOG_MAX): void {
  const key = keyOf(url, state.options);
  noteQueued(state.log, key, url, from, listMax);
  setUrl(state, step, key, URL_STATE.queued, depth, url, { reason: "queued", from });
  send(state, step, fetchTask(state, url, key, depth, "page"));
}

/** Slots used against `limit`: queued and done URLs (a failed URL frees its slot). */
export function slotsUsed(state: CrawlState): number {
  return state.queued + state.done;
}

/** Gives freed slots to the backlog, oldest first. */
function refill(state: CrawlState, step: Step, listMax: number): void {
  if (state.status !== "scraping") return;
  while (slotsUsed(state) < state.options.limit && state.backlog.length > 0) {
    const next = state.backlog.shift() as { url: string; depth: number; from: string };
    if (state.urls.has(keyOf(next.url, state.options))) continue;
    enqueue(state, step, next.url, next.depth, next.from, listMax);
  }
}

function finishIfIdle(state: CrawlState, step: Step, now: number): void {
  if (state.status !== "scraping" || state.queued > 0 || state.discovering || isHeld(state)) return;
  state.completedAt = now;
  // a batch scrape completes whatever its pages did (their failures are listed by /errors); a crawl whose every page
  // failed has failed
  if (state.done === 0 && state.failed > 0 && state.options.kind !== "batch") {
    state.status = "failed";
    const start = state.urls.get(keyOf(state.startUrl, state.options));
    state.error = start !== undefined && stateOf(start) === URL_STATE.failed ? `the start URL could not be crawled: ${state.error || "fetch failed"}` : "no page could be crawled";
    step.emissions.push(event(state, "crawl.failed", now, state.error));
  } else {
    state.status = "completed";
    step.emissions.push(event(state, "crawl.completed", now));
  }
  step.changed = true;
}

export function newState(msg: Extract<FrontierInboxMessage, { type: "CrawlRequested" }>): CrawlState {
  return {
    crawlId: msg.crawlId, teamId: msg.teamId ?? "", webhook: msg.webhook ?? "", startUrl: msg.url, options: msg.options,
    status: "scraping", version: 0, createdAt: msg.createdAt, completedAt: 0, error: "", creditsUsed: 0, tokensUsed: 0,
    urls: new UrlTable(), queued: 0, done: 0, failed: 0, blocked: 0, discovering: false, backlog: [], progressAt: msg.createdAt, reissues: 0,
    log: newUrlLog(),
  };
}

/**
 * Applies one inbox event. `state` is null only before CrawlRequested was seen. `listMax`: skipped URLs listed per
 * crawl (url-log.ts).
 */
export function reduce(state: CrawlState | null, msg: FrontierInboxMessage, now: number, listMax = URL_LOG_MAX): { state: CrawlState | null; step: Step } {
  const step = empty();
  if (msg.type === "CrawlRequested") {
    if (state) return { state, step }; // replay
    // every new job asks its team's admission first (the per-team concurrency limit); it is held until admitted
    const s = newState({ ...msg, options: { ...msg.options, teamQueue: { queuedAt: now } } });
    step.emissions.push(event(s, "crawl.started", now));
    step.emissions.push(jobQueued(s, now));
    if (isBatch(s)) {
      // a batch: its URLs come in SeedsAdded chunks; no link following, no robots.txt/sitemap discovery
      s.discovering = true;
      step.changed = true;
      return { state: s, step };
    }
    // the start URL is always crawled, whatever the filters say
    enqueue(s, step, msg.url, 0, "", listMax);
    const sitemap = msg.options.sitemap ?? "include";
    if (sitemap !== "skip") {
      s.discovering = true;
      send(s, step, fetchTask(s, msg.url, keyOf(msg.url, msg.options), 0, "discover"));
    }
    step.changed = true;
    return { state: s, step };
  }
  if (!state) return { state, step };
  const o = state.options;
  switch (msg.type) {
    case "SeedsAdded": {
      if (state.status !== "scraping" || !isBatch(state)) break;
      // an append's credits raise the batch's budget (and its PDFs' pages) once, before any of its pages is billed
      const first = msg.urls[0];
      if (msg.credits && o.maxCredits !== undefined && first !== undefined && !state.urls.has(seedKey(msg.keyPrefix, msg.first, first, o))) {
        const maxCredits = o.maxCredits + msg.credits;
        state.options = { ...o, maxCredits, ...(o.pdf?.creditPages !== undefined ? { pdf: { ...o.pdf, creditPages: maxCredits } } : {}) };
      }
      msg.urls.forEach((url, i) => {
        const key = seedKey(msg.keyPrefix, msg.first + i, url, o);
        if (state.urls.has(key)) return; // replay
        setUrl(state, step, key, URL_STATE.queued, 0, url, { reason: "queued" });
        send(state, step, fetchTask(state, url, key, 0, "page"));
      });
      // more chunks of this request follow: the batch must not complete in between
      state.discovering = !msg.last;
      step.changed = true;
      finishIfIdle(state, step, now);
      break;
    }
    case "LinksDiscovered": {
      if (state.status !== "scraping" || isBatch(state)) break;
      const fromSitemap = msg.source === "sitemap";
      const from = fromSitemap ? FROM_SITEMAP : (msg.url ?? "");
      const depth = fromSitemap ? 0 : msg.depth + 1;
      // sitemap=only: page links are not followed; a page at maxDiscoveryDepth yields no links; sitemap URLs (depth 0)
      // need maxDiscoveryDepth > 0. Each link still gets its reason.
      const notFollowed = linkSkip(o, fromSitemap, depth);
      const version = state.version + 1;
      for (const href of msg.links) {
        const url = resolveLink(href);
        if (!url) continue;
        const key = keyOf(url, o);
        const found = { crawlId: state.crawlId, key, url, depth, from, version };
        if (state.urls.has(key)) {
          noteDuplicate(state.log, step.urlRows, found, listMax);
          continue;
        }
        const skip = notFollowed ?? scopeSkip(state.startUrl, url, o, msg.url ?? state.startUrl);
        if (skip) {
          noteSkip(state.log, step.urlRows, found, skip, listMax);
          continue;
        }
        if (slotsUsed(state) >= o.limit) {
          // held for a slot a failure may free; past the backlog's bound, only recorded
          const waiting = state.log.skipped.get(key) === "over_limit";
          if (state.backlog.length < BACKLOG_MAX && !waiting) state.backlog.push({ url, depth, from });
          noteSkip(state.log, step.urlRows, found, { reason: "over_limit", detail: `limit ${o.limit} reached` }, listMax);
          continue;
        }
        enqueue(state, step, url, depth, from, listMax);
        step.changed = true;
      }
      break;
    }
    case "DiscoveryDone": {
      if (!state.discovering) break;
      state.discovering = false;
      for (const w of msg.warnings ?? []) {
        step.errorRows.push({ crawlId: state.crawlId, urlKey: `sitemap:${w.url}`, url: w.url, code: w.code, error: w.error, statusCode: 0, at: now });
      }
      step.changed = true;
      finishIfIdle(state, step, now);
      break;
    }
    case "PageDone": {
      const packed = state.urls.get(msg.urlKey);
      if (packed === undefined || stateOf(packed) !== URL_STATE.queued) {
        if (packed !== undefined && stateOf(packed) === URL_STATE.done && state.queued === 0) reannounce(state, step, now);
        break; // duplicate or unknown
      }
      // a page stored just before a cancel is still returned by GET, so it counts and is billed
      const found = state.log.originals.get(msg.urlKey);
      setUrl(state, step, msg.urlKey, URL_STATE.done, depthOf(packed), found?.url ?? "", { reason: "fetched", from: found?.from ?? "" });
      // authentication on: never more than its budget (maxCredits: the credits the team had left when the job started,
      // raised by those of URLs appended to a batch)
      state.creditsUsed = Math.min(state.creditsUsed + msg.credits, state.options.maxCredits ?? Infinity);
      state.tokensUsed += msg.tokens ?? 0;
      step.changed = true;
      finishIfIdle(state, step, now);
      break;
    }
    case "PageFailed": {
      const packed = state.urls.get(msg.urlKey);
      if (packed === undefined || stateOf(packed) !== URL_STATE.queued) {
        if (packed !== undefined && stateOf(packed) !== URL_STATE.done && state.queued === 0) reannounce(state, step, now);
        break;
      }
      const blocked = msg.code === ROBOTS_BLOCKED;
      const why = failureReason(msg.code, msg.error, blocked, msg.duplicateOf);
      if (why.reason === "duplicate") state.log.raced++;
      const from = state.log.originals.get(msg.urlKey)?.from ?? "";
      setUrl(state, step, msg.urlKey, blocked ? URL_STATE.blocked : URL_STATE.failed, depthOf(packed), msg.url, { ...why, from, ...(msg.attempts ? { attempts: msg.attempts } : {}) });
      step.errorRows.push({
        crawlId: state.crawlId, urlKey: msg.urlKey, url: msg.url, code: msg.code, error: msg.error, statusCode: msg.statusCode ?? 0, at: now,
      });
      if (msg.urlKey === keyOf(state.startUrl, o)) state.error = `${msg.code}: ${msg.error}`;
      step.changed = true;
      refill(state, step, listMax);
      finishIfIdle(state, step, now);
      break;
    }
    case "ResumeRequested":
    case "Admitted":
      // the adapter answers them with resume() / admitted(), which need the queued URLs from the store
      break;
    case "CancelRequested": {
      // a replay after a crash that lost the announcement: announced again (webhook-emit and the team's admission
      // each act on it once)
      if (state.status === "cancelled") step.emissions.push(event(state, "crawl.cancelled", now));
      if (state.status !== "scraping") break;
      state.status = "cancelled";
      state.completedAt = now;
      step.emissions.push(event(state, "crawl.cancelled", now));
      step.changed = true;
      break;
    }
  }
  if (step.changed || step.urlRows.length > 0) progress(state, now);
  return { state, step };
}

function progress(state: CrawlState, now: number): void {
  state.progressAt = now;
  state.reissues = 0;
}

/**
 * After a crash that lost messages, or a crawl stalled past its bound (reissue.ts): the fetch tasks of every queued
 * URL again, the discover task if discovery had not reported, and the end if nothing is outstanding. Duplicates are
 * harmless: the sink stores a URL once and the frontier counts a URL's PageDone once.
 */
export function resume(state: CrawlState, queued: UrlRow[], now: number): Step {
  const step = empty();
  if (state.status !== "scraping") return step;
  state.progressAt = now;
  state.reissues++;
  // held: its JobQueued again (it may be what was lost; the admission knows a job once)
  if (isHeld(state)) return { ...step, emissions: [jobQueued(state, state.options.teamQueue?.queuedAt ?? now)] };
  for (const row of queued) {
    const packed = state.urls.get(row.urlKey);
    // the row's depth: the table keeps depths up to MAX_DEPTH only
    if (packed !== undefined && stateOf(packed) === URL_STATE.queued && row.url) step.emissions.push(fetchTask(state, row.url, row.urlKey, row.depth, "page"));
  }
  // (a batch's `discovering` means "more seed chunks to come": it has no discover task)
  if (state.discovering && !isBatch(state)) step.emissions.push(fetchTask(state, state.startUrl, keyOf(state.startUrl, state.options), 0, "discover"));
  finishIfIdle(state, step, now);
  return step;
}

/**
 * Admitted by its team's limit: the job starts, with the fetch tasks of every URL it queued while held (and its
 * discover task). A second Admitted (a replay, or the admission resending after a restart) changes nothing.
 */
export function admitted(state: CrawlState, queued: UrlRow[], msg: Extract<FrontierInboxMessage, { type: "Admitted" }>, now: number): Step {
  const tq = state.options.teamQueue;
  if (!tq || !isHeld(state) || state.status !== "scraping") return empty();
  state.options = { ...state.options, teamQueue: { ...tq, admittedAt: now, limited: msg.limited } };
  const step = resume(state, queued, now);
  step.changed = true;
  progress(state, now);
  return step;
}

/** Rebuilds a crawl's state from its persisted record and URL rows (after a restart of the frontier). */
export function restore(record: CrawlRecord, urls: UrlRow[], listMax = URL_LOG_MAX): CrawlState {
  const state: CrawlState = {
    crawlId: record.crawlId, teamId: record.teamId, webhook: record.webhook, startUrl: record.url, options: record.options,
    status: record.status, version: record.version, createdAt: record.createdAt, completedAt: record.completedAt,
    error: record.error, creditsUsed: record.creditsUsed, tokensUsed: record.tokensUsed ?? 0, urls: new UrlTable(UrlTable.slotsFor(urls.length)), queued: 0, done: 0, failed: 0, blocked: 0,
    discovering: !record.discoveryDone, backlog: [], progressAt: record.updatedAt, reissues: 0,
    log: restoreUrlLog(urls, record.reasons, listMax),
  };
  for (const row of urls) {
    state.version = Math.max(state.version, row.version);
    if (row.state === URL_STATE.skipped) continue;
    state.urls.set(row.urlKey, pack(row.state, row.depth));
    count(state, row.state, 1);
  }
  return state;
}
