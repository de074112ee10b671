import { describe, expect, it } from "vitest";
import type { CrawlOptions, FetchTask, FrontierInboxMessage } from "../../schemas/index.ts";
import { URL_STATE, type UrlRow } from "../store/crawl-store.ts";
import { keyOf, restore, resume, toRecord, type CrawlState } from "./reducer.ts";
import { reissueAfterMs, reissueCheckMs, reissueDue, reissueWaitMs, type StageLimits } from "./reissue.ts";
import { reduceAdmitted } from "../../test/fixtures/admitted-reduce.ts";

// the config table's defaults
const DEFAULTS: StageLimits = { fetchTimeoutMs: 30_000, fetchRetries: 2, retryAfterMaxMs: 30_000, hostDelayMs: 0, convertTimeoutMs: 30_000, llmTimeoutMs: 60_000, llmRetries: 3 };
// small limits, as the integration test sets them: 2 s + 2 s + 3 s + 5 s
const SMALL: StageLimits = { ...DEFAULTS, fetchTimeoutMs: 2000, fetchRetries: 0, retryAfterMaxMs: 0, convertTimeoutMs: 3000 };
const options: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const ID = "c1";
const START = "https://s.test/docs/";
const k = (url: string) => keyOf(url, options);
const requested: FrontierInboxMessage = { type: "CrawlRequested", crawlId: ID, url: START, options, createdAt: 1 };
const links = (from: string, ...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: k(from), url: from, depth: 0, links: hrefs });
const done = (url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: k(url), credits: 1 });

/** Applies events at the given times; returns the state and the page fetch tasks sent. */
function run(events: [number, FrontierInboxMessage][], from: CrawlState | null = null) {
  let state = from;
  const tasks: string[] = [];
  const rows: UrlRow[] = [];
  for (const [t, e] of events) {
    const r = reduceAdmitted(state, e, t);
    state = r.state;
    rows.push(...r.step.urlRows);
    for (const em of r.step.emissions) if (em.topic === "fetch.tasks") tasks.push((em.value as FetchTask).url);
  }
  return { state: state as CrawlState, tasks, rows };
}

const queuedRows = (state: CrawlState, rows: UrlRow[]) => rows.filter((r) => r.state === URL_STATE.queued && r.url && state.urls.get(r.urlKey) !== undefined);

describe("reissue bound", () => {
  it("is the sum of every stage's time limit for one page, from the config and the crawl's options", () => {
    // (2 + 1) × 30 s fetch + 2 × 30 s Retry-After + 30 s render + 30 s convert + 5 s
    expect(reissueAfterMs(DEFAULTS, options)).toBe(215_000);
    // json: + (3 + 1) × 60 s of extraction
    expect(reissueAfterMs(DEFAULTS, { ...options, formats: ["json"] })).toBe(455_000);
    // the crawl's own timeout replaces FETCH_TIMEOUT_MS; its delay and waitFor add
    expect(reissueAfterMs(DEFAULTS, { ...options, timeoutMs: 10_000, delayMs: 4000, waitForMs: 2000 })).toBe(3 * 10_000 + 2 * 30_000 + 4000 + 12_000 + 30_000 + 5000);
    // a short Retry-After still counts the fetch's own backoff (8 s)
    expect(reissueAfterMs({ ...DEFAULTS, retryAfterMaxMs: 0 }, options)).toBe(90_000 + 16_000 + 30_000 + 30_000 + 5000);
    expect(reissueAfterMs(SMALL, options)).toBe(12_000);
    expect(reissueCheckMs(SMALL)).toBe(3000);
    expect(reissueCheckMs(DEFAULTS)).toBe(10_000);
  });

  it("doubles while a crawl stays stalled, up to 8 times", () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => reissueWaitMs(1000, n))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });
});

describe("reissue of a stalled crawl", () => {
  const bound = reissueAfterMs(SMALL, options);

  it("is due once no event changed the crawl for the bound, not before", () => {
    const { state } = run([[1000, requested], [2000, links(START, `${START}a`, `${START}b`)], [3000, done(START)]]);
    expect(state.progressAt).toBe(3000);
    expect(reissueDue(state, 3000 + bound - 1, SMALL)).toBe(false);
    expect(reissueDue(state, 3000 + bound, SMALL)).toBe(true);
  });

  it("is not restarted by events that change nothing (a duplicate PageDone, known links)", () => {
    const { state } = run([[1000, requested], [2000, links(START, `${START}a`)], [3000, done(START)], [9000, done(START)], [9500, links(START, `${START}a`)]]);
    expect(state.progressAt).toBe(3000);
    expect(reissueDue(state, 3000 + bound, SMALL)).toBe(true);
  });

  it("sends every queued URL again, then waits twice as long; progress resets the wait", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`, `${START}b`)], [3000, done(START)]]);
    const { state } = first;
    const t1 = 3000 + bound;
    const step = resume(state, queuedRows(state, first.rows), t1);
    expect(step.emissions.map((e) => (e.value as FetchTask).url).sort()).toEqual([`${START}a`, `${START}b`]);
    expect(state.reissues).toBe(1);
    expect(reissueDue(state, t1 + bound, SMALL)).toBe(false);
    expect(reissueDue(state, t1 + 2 * bound, SMALL)).toBe(true);
    run([[t1 + 100, done(`${START}a`)]], state);
    expect(state.reissues).toBe(0);
    expect(reissueDue(state, t1 + 100 + bound - 1, SMALL)).toBe(false);
  });

  it("counts a page once when the late original and the reissue both come back: credits exact", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`)], [3000, done(START)]]);
    const { state } = first;
    resume(state, queuedRows(state, first.rows), 3000 + bound);
    const events: string[] = [];
    for (const [t, e] of [[20_000, done(`${START}a`)], [20_500, done(`${START}a`)]] as [number, FrontierInboxMessage][]) {
      const r = reduceAdmitted(state, e, t);
      for (const em of r.step.emissions) if (em.topic === "crawl.events") events.push((em.value as { type: string }).type);
    }
    expect(state.status).toBe("completed");
    expect(state.done).toBe(2);
    expect(state.creditsUsed).toBe(2);
    // the second PageDone announces the end again, as any replay of the message that ended a crawl does (webhook-emit
    // hands an event type once, by event id)
    expect(events).toEqual(["crawl.completed", "crawl.completed"]);
    expect(reissueDue(state, 10_000_000, SMALL)).toBe(false);
  });

  it("a restored crawl counts its stall from its record's last write", () => {
    const first = run([[1000, requested], [2000, links(START, `${START}a`)]]);
    const restored = restore(toRecord(first.state, 2500), first.rows);
    expect(restored.progressAt).toBe(2500);
    expect(restored.reissues).toBe(0);
    expect(reissueDue(restored, 2500 + bound, SMALL)).toBe(true);
  });

  it("is never due for a crawl that ended", () => {
    const { state } = run([[1000, requested], [2000, done(START)]]);
    expect(state.status).toBe("completed");
    expect(reissueDue(state, 1e12, SMALL)).toBe(false);
  });
});
