// The frontier reducer with a batch scrape: seeds in chunks, no de-duplication, no link following, no discovery.
import { describe, expect, it } from "vitest";
import type { CrawlEvent, CrawlOptions, FetchTask, FrontierInboxMessage } from "../../schemas/index.ts";
import { restore, seedKey, toRecord, type CrawlState } from "./reducer.ts";
import { reduceAdmitted } from "../../test/fixtures/admitted-reduce.ts";

const options: CrawlOptions = { kind: "batch", limit: 3, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip", ignoreRobotsTxt: true };
const ID = "b1";
const A = "https://a.test/x";
const B = "https://b.test/y";

function run(events: FrontierInboxMessage[], from: CrawlState | null = null) {
  let state = from;
  const tasks: FetchTask[] = [];
  const out: CrawlEvent[] = [];
  let t = 1000;
  for (const e of events) {
    const r = reduceAdmitted(state, e, t++);
    state = r.state;
    for (const em of r.step.emissions) {
      if (em.topic === "fetch.tasks") tasks.push(em.value as FetchTask);
      if (em.topic === "crawl.events") out.push(em.value as CrawlEvent);
    }
  }
  return { state: state as CrawlState, tasks, events: out };
}

const requested: FrontierInboxMessage = { type: "CrawlRequested", crawlId: ID, url: A, options, createdAt: 1 };
const seeds = (first: number, urls: string[], last: boolean): FrontierInboxMessage => ({ type: "SeedsAdded", crawlId: ID, keyPrefix: "p", first, urls, last });
const done = (i: number, url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: seedKey("p", i, url, options), credits: 1 });

describe("frontier reducer: batch scrape", () => {
  it("fetches nothing and discovers nothing before its seeds arrive; events carry kind batch", () => {
    const { tasks, events, state } = run([requested]);
    expect(tasks).toEqual([]);
    expect(events.map((e) => [e.type, e.kind])).toEqual([["crawl.started", "batch"]]);
    expect(state.discovering).toBe(true);
  });

  it("scrapes each seed once per occurrence, across chunks, and completes only after the last chunk", () => {
    const { tasks, state } = run([requested, seeds(0, [A, A], false), done(0, A), done(1, A)]);
    expect(tasks.map((t) => t.url)).toEqual([A, A]);
    expect(tasks.every((t) => t.kind === "page" && t.depth === 0)).toBe(true);
    expect(state.status).toBe("scraping"); // the second chunk has not come
    const end = run([seeds(2, [B], true), done(2, B)], state);
    expect(end.tasks.map((t) => t.url)).toEqual([B]);
    expect(end.state.status).toBe("completed");
    expect(end.events.at(-1)).toMatchObject({ type: "crawl.completed", kind: "batch" });
    expect(toRecord(end.state, 2000)).toMatchObject({ total: 3, completed: 3 });
  });

  it("a replayed chunk adds nothing; links found on a page are not followed", () => {
    const { tasks, state } = run([
      requested, seeds(0, [A], true), seeds(0, [A], true),
      { type: "LinksDiscovered", crawlId: ID, urlKey: seedKey("p", 0, A, options), url: A, depth: 0, links: ["https://a.test/other"] },
    ]);
    expect(tasks.map((t) => t.url)).toEqual([A]);
    expect(state.queued).toBe(1);
  });

  it("survives a restart from its record and URL rows", () => {
    const first = run([requested, seeds(0, [A, B], true), done(0, A)]);
    const rows = [seedKey("p", 0, A, options), seedKey("p", 1, B, options)].map((urlKey, i) => ({ crawlId: ID, urlKey, url: "", depth: 0, state: (i === 0 ? 1 : 0) as 0 | 1, version: 3 }));
    const restored = restore(toRecord(first.state, 1500), rows);
    const end = run([done(1, B)], restored);
    expect(end.state.status).toBe("completed");
  });

  it("all seeds failed: the batch still completes (its failures are listed by /errors)", () => {
    const { state } = run([requested, seeds(0, [A], true), { type: "PageFailed", crawlId: ID, urlKey: seedKey("p", 0, A, options), url: A, code: "SCRAPE_HTTP_STATUS", error: "HTTP 500" }]);
    expect(state.status).toBe("completed");
    expect(state.failed).toBe(1);
  });
});
