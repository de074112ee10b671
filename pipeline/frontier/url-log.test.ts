import { describe, expect, it } from "vitest";
import type { CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import { mergeUrlRow, URL_STATE, type UrlRow } from "../store/crawl-store.ts";
import { keyOf, reduce, restore, toRecord, type CrawlState } from "./reducer.ts";
import { reduceAdmitted } from "../../test/fixtures/admitted-reduce.ts";
import { ROBOTS_BLOCKED } from "../runtime/errors.ts";

const S = "https://s.test";
const base: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "include" };
const ID = "c1";

/** Runs the events; returns the latest row of every URL key (merged as the stores read them) and the state. */
function run(opts: Partial<CrawlOptions>, events: (o: CrawlOptions) => FrontierInboxMessage[], listMax?: number) {
  const o = { ...base, ...opts };
  let state: CrawlState | null = null;
  const rows: UrlRow[] = [];
  let t = 1000;
  for (const e of [{ type: "CrawlRequested", crawlId: ID, url: `${S}/docs/`, options: o, createdAt: 1 } as FrontierInboxMessage, ...events(o)]) {
    const r: { state: CrawlState | null; step: { urlRows: UrlRow[]; changed: boolean } } = listMax === undefined ? reduceAdmitted(state, e, t++) : reduce(state, e, t++, listMax);
    state = r.state;
    if (state && (r.step.changed || r.step.urlRows.length)) state.version++;
    rows.push(...r.step.urlRows);
  }
  const latest = new Map<string, UrlRow>();
  for (const r of rows) latest.set(r.urlKey, mergeUrlRow(latest.get(r.urlKey), r));
  const byUrl = Object.fromEntries([...latest.values()].map((r) => [r.url.replace(S, ""), [r.reason, r.detail ?? "", r.from?.replace(S, "") ?? ""]]));
  return { state: state as CrawlState, rows, latest: [...latest.values()], byUrl, o };
}

const links = (o: CrawlOptions, from: string, depth: number, ...hrefs: string[]): FrontierInboxMessage =>
  ({ type: "LinksDiscovered", crawlId: ID, urlKey: keyOf(S + from, o), url: S + from, depth, links: hrefs.map((h) => S + h) });
const done = (o: CrawlOptions, url: string): FrontierInboxMessage => ({ type: "PageDone", crawlId: ID, urlKey: keyOf(S + url, o), credits: 1 });
const failed = (o: CrawlOptions, url: string, code: string, error: string, extra: object = {}): FrontierInboxMessage =>
  ({ type: "PageFailed", crawlId: ID, urlKey: keyOf(S + url, o), url: S + url, code, error, ...extra });

describe("url reasons", () => {
  it("gives every URL one reason, with its detail and the page it was found on", () => {
    const { byUrl, state } = run({ excludePaths: ["^/docs/private-area"], maxDiscoveryDepth: 1 }, (o) => [
      links(o, "/docs/", 0, "/docs/a", "/docs/a/", "/docs/private-area/x", "/other/page", "/docs/logo.png", "/docs/robots", "/docs/broken", "/docs/old"),
      { type: "LinksDiscovered", crawlId: ID, urlKey: keyOf(`${S}/docs/`, o), url: `${S}/docs/`, depth: 0, links: [`${S}/docs/private-area/s`, `${S}/docs/only-in-sitemap`], source: "sitemap" },
      { type: "DiscoveryDone", crawlId: ID, sitemaps: 1 },
      links(o, "/docs/a", 1, "/docs/deep"),
      done(o, "/docs/"), done(o, "/docs/a"),
      failed(o, "/docs/robots", ROBOTS_BLOCKED, "robots.txt disallows it (line 2: Disallow: /docs/robots)"),
      failed(o, "/docs/broken", "SCRAPE_HTTP_STATUS", "HTTP 404", { attempts: 2, statusCode: 404 }),
      failed(o, "/docs/old", "SCRAPE_RACED_REDIRECT", "same page as an earlier document", { duplicateOf: `${S}/docs/a` }),
      done(o, "/docs/only-in-sitemap"),
    ]);
    expect(byUrl).toEqual({
      "/docs/": ["fetched", "", ""],
      "/docs/a": ["fetched", "", "/docs/"],
      "/docs/a/": ["duplicate", `${S}/docs/a`, "/docs/"],
      "/docs/private-area/x": ["excluded", "^/docs/private-area", "/docs/"],
      "/docs/private-area/s": ["excluded", "^/docs/private-area", "sitemap"],
      "/other/page": ["out_of_scope", "outside-path: not under /docs/ (crawlEntireDomain is false)", "/docs/"],
      "/docs/logo.png": ["out_of_scope", "skipped-file-type: .png files are never crawled", "/docs/"],
      "/docs/robots": ["robots_blocked", "robots.txt disallows it (line 2: Disallow: /docs/robots)", "/docs/"],
      "/docs/broken": ["failed", "SCRAPE_HTTP_STATUS: HTTP 404", "/docs/"],
      "/docs/old": ["duplicate", `${S}/docs/a`, "/docs/"],
      "/docs/deep": ["too_deep", "depth 2 is beyond maxDiscoveryDepth 1", "/docs/a"],
      "/docs/only-in-sitemap": ["fetched", "", "sitemap"],
    });
    expect(toRecord(state, 5000).reasons).toEqual({ fetched: 3, failed: 1, robots_blocked: 1, duplicate: 2, excluded: 2, out_of_scope: 2, too_deep: 1 });
    expect(state.status).toBe("completed");
  });

  it("a skipped URL later admitted becomes queued (too deep, then over limit, then a freed slot)", () => {
    const { byUrl, state } = run({ limit: 2, maxDiscoveryDepth: 1, sitemap: "skip" }, (o) => [
      links(o, "/docs/a", 1, "/docs/x"), // depth 2: too deep (a LinksDiscovered of a page the test pretends was queued)
      links(o, "/docs/", 0, "/docs/a", "/docs/x", "/docs/y"), // /docs/x now within depth, but the limit is full
      failed(o, "/docs/a", "SCRAPE_HTTP_STATUS", "HTTP 500"), // frees a slot: /docs/x from the backlog
    ]);
    expect(byUrl["/docs/x"]).toEqual(["queued", "", "/docs/"]);
    expect(byUrl["/docs/y"]).toEqual(["over_limit", "limit 2 reached", "/docs/"]);
    expect(toRecord(state, 5000).reasons).toEqual({ queued: 2, failed: 1, over_limit: 1 });
  });

  it("sitemap=only: page links are recorded as not followed", () => {
    const { byUrl } = run({ sitemap: "only" }, (o) => [links(o, "/docs/", 0, "/docs/a")]);
    expect(byUrl["/docs/a"]).toEqual(["not_followed", 'sitemap is "only": links on pages are not followed', "/docs/"]);
  });

  it("lists at most listMax skipped URLs, counts the rest, and restores both after a restart", () => {
    const { state, latest } = run({ sitemap: "skip" }, (o) => [links(o, "/docs/", 0, "/x/1", "/x/2", "/x/3", "/docs/a")], 2);
    expect(latest.filter((r) => r.state === URL_STATE.skipped)).toHaveLength(2);
    const record = toRecord(state, 5000);
    expect(record.reasons).toEqual({ queued: 2, out_of_scope: 3 });
    const back = restore(record, latest, 2);
    expect(back.log.unlisted).toBe(1);
    expect(back.queued).toBe(2); // skipped rows are not URL states
    expect(toRecord(back, 6000).reasons).toEqual(record.reasons);
  });
});
