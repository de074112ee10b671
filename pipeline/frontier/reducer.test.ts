import { describe, expect, it } from "vitest";
import type { Admitted, CrawlOptions, FetchTask, FrontierInboxMessage } from "../../schemas/index.ts";
import { URL_STATE } from "../store/crawl-store.ts";
import { admitted, depthOf, keyOf, reduce, restore, resume, stateOf, toRecord, type CrawlState } from "./reducer.ts";
import { reduceAdmitted } from "../../test/fixtures/admitted-reduce.ts";
import { ROBOTS_BLOCKED } from "../runtime/errors.ts";

const options: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const k = (url: string) => keyOf(url, options);
const ID = "c1";

function run(events: FrontierInboxMessage[], opts: Partial<CrawlOptions> = {}) {
  let state: CrawlState | null = null;
  const tasks: FetchTask[] = [];
  const events_: string[] = [];
  let t = 1000;
  for (const e of events) {
    const e2 = e.type === "CrawlRequested" ? { ...e, options: { ...options, ...opts } } : e;
    const r = reduceAdmitted(state, e2, t++);
    state = r.state;
    for (const em of r.step.emissions) {
      if (em.topic === "fetch.tasks" && (em.value as FetchTask).kind === "page") tasks.push(em.value as FetchTask);
      if (em.topic === "crawl.events") events_.push((em.value as { type: string }).type);
    }
  }
  return { state: state as CrawlState, tasks, events: events_ };
}

const requested = (url = "https://s.test/docs/"): FrontierInboxMessage => ({ type: "CrawlRequested", crawlId: ID, url, options, createdAt: 1 });
const links = (from: string, ...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: k(from), url: from, depth: 0, links: hrefs });
const linksAt = (depth: number, from: string, ...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: k(from), url: from, depth, links: hrefs });
const sitemapLinks = (...hrefs: string[]): FrontierInboxMessage => ({ type: "LinksDiscovered", crawlId: ID, urlKey: k("https://s.test/docs/"), depth: 0, links: hrefs, source: "sitemap" });
const done = (url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: k(url), credits: 1 });
const failed = (url: string, code = "SCRAPE_HTTP_STATUS"): FrontierInboxMessage => ({ type: "PageFailed", crawlId: ID, urlKey: k(url), url, code, error: "HTTP 404", statusCode: 404 });

describe("frontier reducer", () => {
  it("enqueues the start URL and announces the start", () => {
    const { tasks, events, state } = run([requested()]);
    expect(tasks.map((t) => t.url)).toEqual(["https://s.test/docs/"]);
    expect(events).toEqual(["crawl.started"]);
    expect(state.status).toBe("scraping");
  });

  it("counts a page's LLM tokens with its credits, once, and keeps them across a restore", () => {
    const withTokens = (url: string, tokens: number): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: k(url), credits: 5, tokens });
    const { state } = run([
      requested(), links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/b"),
      withTokens("https://s.test/docs/", 120), withTokens("https://s.test/docs/", 120), done("https://s.test/docs/a"), withTokens("https://s.test/docs/b", 30),
    ]);
    expect(state.creditsUsed).toBe(11);
    expect(state.tokensUsed).toBe(150);
    const record = toRecord(state, 5000);
    expect(record.tokensUsed).toBe(150);
    expect(restore(record, []).tokensUsed).toBe(150);
    // a record written before tokens were counted
    const { tokensUsed: _t, ...old } = record;
    expect(restore(old as typeof record, []).tokensUsed).toBe(0);
  });

  it("enqueues a URL key at most once per crawl", () => {
    const { tasks } = run([
      requested(),
      links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/a/", "http://www.s.test/docs/a", "https://s.test/docs/a#x", "https://s.test/docs/index.html"),
      links("https://s.test/docs/a", "https://s.test/docs/a", "https://s.test/docs/"),
    ]);
    expect(tasks.map((t) => t.url)).toEqual(["https://s.test/docs/", "https://s.test/docs/a"]);
  });

  it("at scale (30,000 URLs in its fingerprint table, grown ~30 times): each enqueued once, replays idempotent, completion exact", () => {
    const many = Array.from({ length: 30_000 }, (_, i) => `https://s.test/docs/p/${i}`);
    const chunks = Array.from({ length: 30 }, (_, c) => links("https://s.test/docs/", ...many.slice(c * 1000, c * 1000 + 1000)));
    // every chunk twice (a replay), and the links again in other spellings
    const spelled = links("https://s.test/docs/", ...many.slice(0, 1000).map((u) => u.replace("https://", "http://www.")));
    const first = run([requested(), ...chunks, ...chunks, spelled], { limit: 100_000 });
    expect(first.tasks).toHaveLength(30_001);
    expect(new Set(first.tasks.map((t) => t.urlKey)).size).toBe(30_001);
    expect(first.state.urls.size).toBe(30_001);
    let state: CrawlState = first.state;
    let t = 5000;
    const events: string[] = [];
    for (const url of ["https://s.test/docs/", ...many, ...many.slice(0, 500)]) {
      const r = reduceAdmitted(state, done(url), t++);
      state = r.state as CrawlState;
      for (const e of r.step.emissions) if (e.topic === "crawl.events") events.push((e.value as { type: string }).type);
    }
    expect([state.status, state.done, state.queued, state.creditsUsed]).toEqual(["completed", 30_001, 0, 30_001]);
    expect(events.filter((e) => e === "crawl.completed").length).toBeGreaterThanOrEqual(1);
    expect(state.urls.bytes / state.urls.size).toBeLessThanOrEqual(16);
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
    // start + p0 + p1 fill the limit (p2..p4 wait in the backlog); p0 fails and its slot goes to p2
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
    const keys = ["https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/b"].map(k);
    const rows = keys.map((urlKey) => ({ urlKey, packed: state.urls.get(urlKey) as number })).map(({ urlKey, packed }) => ({ crawlId: ID, urlKey, url: "", depth: depthOf(packed), state: stateOf(packed), version: 3 }));
    const back = restore(toRecord(state, 9), rows);
    expect(back.urls.size).toBe(state.urls.size);
    for (const key of keys) expect(back.urls.get(key)).toBe(state.urls.get(key));
    expect([back.queued, back.done, back.failed]).toEqual([1, 1, 1]);
    expect(stateOf(back.urls.get(k("https://s.test/docs/b")) as number)).toBe(URL_STATE.failed);
  });

  it("waits for discovery (robots.txt, sitemaps) before completing, and takes sitemap URLs at depth 0", () => {
    const r = run([requested(), done("https://s.test/docs/")], { sitemap: "include" });
    expect(r.state.status).toBe("scraping");
    const r2 = run([requested(), sitemapLinks("https://s.test/docs/from-sitemap", "https://s.test/outside"), { type: "DiscoveryDone", crawlId: ID }, done("https://s.test/docs/")], { sitemap: "include" });
    expect(r2.tasks.map((t) => [t.url, t.depth])).toEqual([["https://s.test/docs/", 0], ["https://s.test/docs/from-sitemap", 0]]);
    expect(r2.state.status).toBe("scraping");
    const r3 = run([requested(), sitemapLinks("https://s.test/docs/a"), { type: "DiscoveryDone", crawlId: ID }, done("https://s.test/docs/"), done("https://s.test/docs/a")], { sitemap: "include" });
    expect(r3.state.status).toBe("completed");
  });

  it("sitemap=only follows sitemap URLs and no page links", () => {
    const r = run([requested(), sitemapLinks("https://s.test/docs/a"), links("https://s.test/docs/", "https://s.test/docs/b")], { sitemap: "only" });
    expect(r.tasks.map((t) => t.url)).toEqual(["https://s.test/docs/", "https://s.test/docs/a"]);
  });

  it("maxDiscoveryDepth: a page at that depth yields no links", () => {
    const r0 = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a")], { maxDiscoveryDepth: 0 });
    expect(r0.tasks).toHaveLength(1);
    const r1 = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a"), linksAt(1, "https://s.test/docs/a", "https://s.test/docs/b")], { maxDiscoveryDepth: 1 });
    expect(r1.tasks.map((t) => t.url)).toEqual(["https://s.test/docs/", "https://s.test/docs/a"]);
  });

  it("include/exclude patterns filter discovered links but never the start URL", () => {
    const r = run([requested("https://s.test/"), links("https://s.test/", "https://s.test/blog/1", "https://s.test/blog/private/2", "https://s.test/shop/3")], { includePaths: ["^/blog/"], excludePaths: ["private"] });
    expect(r.tasks.map((t) => t.url)).toEqual(["https://s.test/", "https://s.test/blog/1"]);
  });

  it("ignoreQueryParameters and deduplicateSimilarURLs shape the dedup key", () => {
    const q = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a?x=1", "https://s.test/docs/a?x=2")], { ignoreQueryParameters: true });
    expect(q.tasks).toHaveLength(2);
    const exact = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/a/", "http://s.test/docs/a")], { deduplicateSimilarURLs: false });
    expect(exact.tasks).toHaveLength(4);
  });

  it("a start URL blocked by robots.txt ends the crawl completed (not failed, never scraping)", () => {
    const { state } = run([requested(), failed("https://s.test/docs/", ROBOTS_BLOCKED)]);
    expect(state.status).toBe("completed");
    expect(state.blocked).toBe(1);
    expect(toRecord(state, 1)).toMatchObject({ completed: 0, failed: 0, total: 0 });
  });
});

describe("terminal events", () => {
  it("go out in phase 1, and a replay of the message that ended the crawl announces the end again", () => {
    let state: CrawlState | null = reduceAdmitted(null, requested(), 1).state;
    const end = reduce(state, done("https://s.test/docs/"), 2);
    state = end.state;
    expect(end.step.emissions.filter((e) => e.topic === "crawl.events").map((e) => [(e.value as { type: string }).type, e.phase])).toEqual([["crawl.completed", 1]]);
    const replay = reduce(state, done("https://s.test/docs/"), 3);
    expect(replay.step.emissions.map((e) => (e.value as { type: string }).type)).toEqual(["crawl.completed"]);
    expect(replay.state?.done).toBe(1);
    expect(replay.state?.creditsUsed).toBe(1);
  });

  it("resume after a crash: the fetch tasks of the queued URLs again, and the end when nothing is outstanding", () => {
    const { state } = run([requested(), links("https://s.test/docs/", "https://s.test/docs/a", "https://s.test/docs/b"), done("https://s.test/docs/")]);
    const rows = [
      { crawlId: ID, urlKey: k("https://s.test/docs/a"), url: "https://s.test/docs/a", depth: 1, state: URL_STATE.queued, version: 3 },
      { crawlId: ID, urlKey: k("https://s.test/docs/b"), url: "https://s.test/docs/b", depth: 1, state: URL_STATE.queued, version: 3 },
      // a row that is stale in the store: the state says done
      { crawlId: ID, urlKey: k("https://s.test/docs/"), url: "https://s.test/docs/", depth: 0, state: URL_STATE.queued, version: 1 },
    ];
    const step = resume(state, rows, 5000);
    expect(step.emissions.map((e) => (e.value as FetchTask).url).sort()).toEqual(["https://s.test/docs/a", "https://s.test/docs/b"]);
    const idle = run([requested(), done("https://s.test/docs/")]).state;
    idle.status = "scraping";
    idle.completedAt = 0;
    expect(resume(idle, [], 5000).emissions.map((e) => (e.value as { type: string }).type)).toEqual(["crawl.completed"]);
  });
});

describe("the team's concurrency limit", () => {
  const admittedMsg = (limited: boolean): Admitted => ({ type: "Admitted", crawlId: ID, limited, queuedMs: 0 });

  it("holds a new job: queued URLs recorded, JobQueued to the team, no fetch task until Admitted", () => {
    const start: FrontierInboxMessage = { type: "CrawlRequested", crawlId: ID, url: "https://s.test/docs/", createdAt: 1, teamId: "team-a", options: { ...options, sitemap: "include" } };
    const r = reduce(null, start, 1000);
    const state = r.state as CrawlState;
    expect(r.step.emissions.map((e) => e.topic).sort()).toEqual(["crawl.events", "team.admission"]);
    expect(r.step.emissions.find((e) => e.topic === "team.admission")).toMatchObject({ key: "team-a", value: { type: "JobQueued", teamId: "team-a", crawlId: ID, at: 1000 } });
    expect(r.step.urlRows.map((row) => row.url)).toEqual(["https://s.test/docs/"]);
    expect(state.queued).toBe(1);
    expect(toRecord(state, 1000).options.teamQueue).toEqual({ queuedAt: 1000 });
    // a cancel while held ends it at once
    const cancelled = reduce(structuredClone(state), { type: "CancelRequested", crawlId: ID }, 1100);
    expect(cancelled.state?.status).toBe("cancelled");
    expect(cancelled.step.emissions.filter((e) => e.topic === "fetch.tasks")).toEqual([]);
    expect(admitted(cancelled.state as CrawlState, r.step.urlRows, admittedMsg(true), 1200).emissions).toEqual([]);
    // admitted: the fetch tasks of the queued URLs and the discover task, once
    const go = admitted(state, r.step.urlRows, admittedMsg(true), 1500);
    expect(go.emissions.map((e) => [(e.value as FetchTask).kind, (e.value as FetchTask).url])).toEqual([["page", "https://s.test/docs/"], ["discover", "https://s.test/docs/"]]);
    expect(go.emissions.every((e) => (e.value as FetchTask).teamId === "team-a")).toBe(true);
    expect(state.options.teamQueue).toEqual({ queuedAt: 1000, admittedAt: 1500, limited: true });
    expect(admitted(state, r.step.urlRows, admittedMsg(true), 1600).emissions).toEqual([]);
    // a job restored from its record while held stays held
    const held = restore({ ...toRecord(r.state as CrawlState, 1000), options: { ...options, teamQueue: { queuedAt: 1000 } } }, r.step.urlRows);
    // resumed after a crash, a held job sends no fetch task, only its JobQueued again (it may be what was lost)
    expect(resume(held, r.step.urlRows, 2000).emissions.map((e) => [e.topic, e.value])).toEqual([["team.admission", { type: "JobQueued", teamId: "team-a", crawlId: ID, at: 1000 }]]);
  });

  it("a replayed CancelRequested announces the cancel again (the team's admission frees the slot once)", () => {
    const { state } = run([requested(), { type: "CancelRequested", crawlId: ID }]);
    const replay = reduce(state, { type: "CancelRequested", crawlId: ID }, 5000);
    expect(replay.step.emissions.map((e) => (e.value as { type: string }).type)).toEqual(["crawl.cancelled"]);
  });
});
