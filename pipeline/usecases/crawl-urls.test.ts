import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { URL_STATE, type CrawlRecord, type UrlRow } from "../store/crawl-store.ts";
import { crawlUrlPage, crawlUrls, explainUrl, pageUrls } from "./crawl-urls.ts";

const S = "https://s.test";
const crawl: CrawlRecord = {
  crawlId: "c1", version: 3, teamId: "t", url: `${S}/docs/`, webhook: "", status: "completed", total: 2, completed: 2, failed: 0, creditsUsed: 2, tokensUsed: 0,
  discoveryDone: true, createdAt: 1, updatedAt: 2, completedAt: 2, expiresAt: 9e12, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, excludePaths: ["^/docs/old"] },
  reasons: { fetched: 2, out_of_scope: 3 },
};

const ROWS: UrlRow[] = [
    { crawlId: "c1", urlKey: "s.test/docs", url: `${S}/docs/`, depth: 0, state: URL_STATE.queued, version: 1, reason: "queued", from: "" },
    { crawlId: "c1", urlKey: "s.test/docs/a", url: `${S}/docs/a`, depth: 1, state: URL_STATE.queued, version: 2, reason: "queued", from: `${S}/docs/` },
    { crawlId: "c1", urlKey: "s.test/about", url: `${S}/about`, depth: 1, state: URL_STATE.skipped, version: 2, reason: "out_of_scope", detail: "outside-path: not under /docs/", from: `${S}/docs/` },
    // a PageDone's row: no URL, no page; the earlier row's are kept
    { crawlId: "c1", urlKey: "s.test/docs/a", url: "", depth: 1, state: URL_STATE.done, version: 3, reason: "fetched" },
    { crawlId: "c1", urlKey: "s.test/docs", url: `${S}/docs/`, depth: 0, state: URL_STATE.done, version: 3, reason: "fetched", from: "" },
];

async function store(dir: string | null = null) {
  const s = await EmbeddedCrawlStore.open(dir, 0);
  await s.saveCrawls([crawl]);
  await s.saveUrls(ROWS);
  return s;
}

describe("crawl urls", () => {
  it("lists entries by depth then URL, filters and pages them, and counts what is not listed", async () => {
    const { entries, unlisted } = await crawlUrls(await store(), crawl);
    expect(entries.map((e) => [e.url.slice(S.length), e.state, e.reason, e.discoveredFrom])).toEqual([
      ["/docs/", "fetched", "fetched", null], ["/about", "skipped", "out_of_scope", `${S}/docs/`], ["/docs/a", "fetched", "fetched", `${S}/docs/`],
    ]);
    expect(unlisted).toBe(2); // 3 out_of_scope counted, 1 listed
    expect(pageUrls(entries, { state: "fetched", skip: 0, limit: 1 })).toMatchObject({ total: 2, nextSkip: 1, data: [{ url: `${S}/docs/` }] });
    expect(pageUrls(entries, { state: "fetched", skip: 1, limit: 1 }).nextSkip).toBeUndefined();
  });

  it("explains a URL it saw (also spelled otherwise), and one it never reached with what its rules would have said", async () => {
    const s = await store();
    expect((await explainUrl(s, crawl, `${S}/docs/a/`)).explanation).toBe(`Fetched (as ${S}/docs/a, the same page for this crawl) and stored; linked from ${S}/docs/ (depth 1).`);
    expect((await explainUrl(s, crawl, `${S}/about`)).explanation).toBe(`Outside the crawl's scope (outside-path: not under /docs/); linked from ${S}/docs/ (depth 1).`);
    const never = await explainUrl(s, crawl, `${S}/docs/old/x`);
    expect(never).toMatchObject({ seen: false, entry: null });
    expect(never.explanation).toBe('Never seen: no page the crawl fetched links to it and the sitemap does not list it; had one linked to it, it would have been excluded by the excludePaths pattern "^/docs/old"; note: 2 skipped URL(s) were counted but not listed (CRAWL_URL_LOG_MAX), it may be one of them.');
  });

  it("a finished crawl's listing kept on disk pages as the one built for each read, and is built again when the crawl changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-url-listing-"));
    try {
      const s = await store(dir);
      expect(s.urlListings?.open(crawl)).toBeNull(); // a small crawl's is built at its first read
      const { entries } = await crawlUrls(s, crawl);
      const queries = [{ skip: 0, limit: 2 }, { skip: 1, limit: 5 }, { skip: 9, limit: 5 }, { state: "fetched", skip: 0, limit: 1 }, { state: "fetched", skip: 1, limit: 1 }, { reason: "out_of_scope", skip: 0, limit: 9 }, { state: "failed", skip: 0, limit: 9 }];
      for (const q of queries) expect(await crawlUrlPage(s, crawl, q)).toEqual({ ...pageUrls(entries, q), unlisted: 2 });
      expect(s.urlListings?.open(crawl)?.size).toBe(3);
      // a URL row written after: that listing is no longer served
      await s.saveUrls([{ crawlId: "c1", urlKey: "s.test/docs/b", url: `${S}/docs/b`, depth: 1, state: URL_STATE.failed, version: 4, reason: "failed", detail: "HTTP 500", from: `${S}/docs/` }]);
      expect(s.urlListings?.open(crawl)).toBeNull();
      expect((await crawlUrlPage(s, crawl, { state: "failed", skip: 0, limit: 9 })).data.map((e) => e.url)).toEqual([`${S}/docs/b`]);
      // a running crawl pages the latest listing built (its first reader waits for one), a few seconds behind at most
      const running = { ...crawl, status: "scraping" as const, version: 9 };
      expect((await crawlUrlPage(s, running, { skip: 0, limit: 9 })).total).toBe(4);
      await s.saveUrls([{ crawlId: "c1", urlKey: "s.test/docs/c", url: `${S}/docs/c`, depth: 1, state: URL_STATE.queued, version: 5, reason: "queued", from: `${S}/docs/` }]);
      expect((await crawlUrlPage(s, running, { skip: 0, limit: 9 })).total).toBe(4);
      // once it ended, exactly
      expect((await crawlUrlPage(s, crawl, { skip: 0, limit: 9 })).total).toBe(5);
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("builds a large crawl's listing when the crawl ends, before any reader, without holding the event loop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-url-listing-"));
    try {
      const s = await EmbeddedCrawlStore.open(dir, 0);
      const big = { ...crawl, crawlId: "big", status: "scraping" as const, reasons: { fetched: 30_000 } };
      await s.saveCrawls([big]);
      const rows: UrlRow[] = [];
      for (let i = 0; i < 30_000; i++) {
        const url = `${S}/docs/${(i * 7919) % 30_000}/a-longer-path-segment-for-size`;
        rows.push({ crawlId: "big", urlKey: url.slice(8), url, depth: 1 + (i % 3), state: URL_STATE.queued, version: 2, reason: "queued", from: `${S}/docs/` });
      }
      // written as the frontier does, a batch at a time
      for (let i = 0; i < rows.length; i += 500) await s.saveUrls(rows.slice(i, i + 500));
      const done = rows.map((r) => ({ ...r, url: "", from: undefined, state: URL_STATE.done, version: 3, reason: "fetched" as const }));
      for (let i = 0; i < done.length; i += 500) await s.saveUrls(done.slice(i, i + 500));
      const ended = { ...big, status: "completed" as const, version: 4 };
      expect(s.urlListings?.open(ended)).toBeNull();
      // timer callbacks that ran while the store built the listing on its own (one task would let in one at most)
      let ticks = 0;
      const timer = setInterval(() => ticks++, 1);
      await s.saveCrawls([ended]);
      await s.urlListings?.settle();
      clearInterval(timer);
      // built by the store, no reader asked
      expect(s.urlListings?.open(ended)?.size).toBe(30_000);
      expect(ticks).toBeGreaterThan(5);
      const { entries } = await crawlUrls(s, ended);
      for (const q of [{ skip: 0, limit: 100 }, { skip: 29_998, limit: 5 }, { state: "fetched", skip: 12_345, limit: 3 }]) {
        expect(await crawlUrlPage(s, ended, q)).toEqual({ ...pageUrls(entries, q), unlisted: 0 });
      }
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
