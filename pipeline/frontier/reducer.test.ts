import { describe, expect, it } from "vitest";
import type { CrawlOptions, FetchTask, FrontierInboxMessage } from "../../schemas/index.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import { keyOf, reduce, restore, toRecord, type CrawlState } from "./reducer.ts";

const options: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true };
const ID = "c1";

function run(events: FrontierInboxMessage[], opts: Partial<CrawlOptions> = {}) {
  let state: CrawlState | null = null;
  const tasks: FetchTask[] = [];
  const events_: string[] = [];
  let t = 1000;
  for (const e of events) {
    const e2 = e.type === "CrawlRequested" ? { ...e, options: { ...options, ...opts } } : e;
    const r = reduce(state, e2, t++);
    state = r.state;
    for (const em of r.step.emissions) {
      if (em.topic === "fetch.tasks") tasks.push(em.value as FetchTask);
      if (em.topic === "crawl.events") events_.push((em.value as { type: string }).type);
    }
  }
  return { state: state as CrawlState, tasks, events: events_ };
}

const requested = (url = "https://s.test/docs/"): FrontierInboxMessage => ({ type: "CrawlRequested", crawlId: ID, url, options, createdAt: 1 });
const links = (from: string, ...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: keyOf(from), depth: 0, links: hrefs });
const done = (url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: keyOf(url), credits: 1 });
const failed = (url: string): FrontierInboxMessage => ({ type: "PageFailed", crawlId: ID, urlKey: keyOf(url), url, code: "SCRAPE_HTTP_STATUS", error: "HTTP 404", statusCode: 404 });

describe("frontier reducer", () => {
  it("enqueues the start URL and announces the start", () => {
    const { tasks, events, state } = run([requested()]);
    expect(tasks.map((t) => t.url)).toEqual(["https://s.test/docs/"]);
    expect(events).toEqual(["crawl.started"]);
    expect(state.status).toBe("scraping");
  });

  it("enqueues a URL key at most once per crawl", () => {
    const { tasks } = run([
      requested(),
      links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/a/", "http://www.s.test/docs/a", "https://s.test/docs/a#x", "https://s.test/docs/index.html"),
      links("https://s.test/docs/a", "https://s.test/docs/a", "https://s.test/docs/"),
    ]);
    expect(tasks.map((t) => t.url)).toEqual(["https://s.test/docs/", "https://s.test/docs/a"]);
  });

  it("replays of CrawlRequested, PageDone and PageFailed change nothing", () => {
    const a = run([requested(), links("https://s.test/docs/", "/docs/a"), done("https://s.test/docs/")]);
    const b = run([requested(), requested(), links("https://s.test/docs/", "https://s.test/docs/a"), done("https://s.test/docs/"), done("https://s.test/docs/"), failed("https://s.test/docs/")]);
    expect(b.state.done).toBe(1);
    expect(b.state.failed).toBe(0);
    expect(b.state.creditsUsed).toBe(1);
    expect(a.state.queued).toBe(0); // "/docs/a" is relative without a base: dropped
    expect(b.state.queued).toBe(1);
  });

  it("counts limit in URLs crawled; a failed URL frees its slot", () => {
    const many = Array.from({ length: 10 }, (_, i) => `https://s.test/docs/p${i}`);
    const { state, tasks } = run([requested(), links("https://s.test/docs/", ...many.slice(0, 5)), failed(many[0] as string), links("https://s.test/docs/", ...many)], { limit: 3 });
    // start + p0 + p1 fill the limit; p0 fails and frees one slot, taken by p2
    expect(tasks.map((t) => t.url)).toEqual(["https://s.test/docs/", many[0], many[1], many[2]]);
    expect(state.queued + state.done).toBe(3);
  });

  it("completes exactly when nothing is outstanding", () => {
    const r1 = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a"), done("https://s.test/docs/")]);
    expect(r1.state.status).toBe("scraping");
    const r2 = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a"), done("https://s.test/docs/"), done("https://s.test/docs/a")]);
    expect(r2.state.status).toBe("completed");
    expect(r2.events).toEqual(["crawl.started", "crawl.completed"]);
    const record = toRecord(r2.state, 5000);
    expect(record).toMatchObject({ status: "completed", completed: 2, total: 2, creditsUsed: 2 });
    expect(record.expiresAt).toBe(r2.state.completedAt + 24 * 3600 * 1000);
  });

  it("fails a crawl whose every page failed, naming the start URL's error", () => {
    const { state, events } = run([requested(), failed("https://s.test/docs/")]);
    expect(state.status).toBe("failed");
    expect(state.error).toContain("HTTP 404");
    expect(events).toEqual(["crawl.started", "crawl.failed"]);
  });

  it("drops links outside the scope", () => {
    const { tasks } = run([requested(), links("https://s.test/docs/", "https://s.test/other/x", "https://elsewhere.test/docs/y", "https://s.test/docs/img.png")]);
    expect(tasks).toHaveLength(1);
  });

  it("cancel takes effect at once; later links are ignored, a page stored before it still counts", () => {
    const { state, tasks, events } = run([
      requested(),
      { type: "CancelRequested", crawlId: ID },
      links("https://s.test/docs/", "https://s.test/docs/a"),
      done("https://s.test/docs/"),
    ]);
    expect(state.status).toBe("cancelled");
    expect(tasks).toHaveLength(1);
    expect(events).toEqual(["crawl.started", "crawl.cancelled"]);
    expect(state.done).toBe(1);
    expect(state.creditsUsed).toBe(1);
  });

  it("restores the same state from its persisted record and URL rows", () => {
    const { state } = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/b"), done("https://s.test/docs/"), failed("https://s.test/docs/b")]);
    const rows = [...state.urls].map(([urlKey, e]) => ({ crawlId: ID, urlKey, url: e.url, depth: e.depth, state: e.state, version: 3 }));
    const back = restore(toRecord(state, 9), rows);
    expect(back.urls).toEqual(state.urls);
    expect([back.queued, back.done, back.failed]).toEqual([1, 1, 1]);
    expect(back.urls.get(keyOf("https://s.test/docs/b"))?.state).toBe(URL_STATE.failed);
  });
});
