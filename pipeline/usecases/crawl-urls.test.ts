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
      expect(s.urlListings?.open(crawl)).toBeNull();
      const { entries } = await crawlUrls(s, crawl);
      const queries = [{ skip: 0, limit: 2 }, { skip: 1, limit: 5 }, { skip: 9, limit: 5 }, { state: "fetched", skip: 0, limit: 1 }, { state: "fetched", skip: 1, limit: 1 }, { reason: "out_of_scope", skip: 0, limit: 9 }, { state: "failed", skip: 0, limit: 9 }];
      for (const q of queries) expect(await crawlUrlPage(s, crawl, q)).toEqual({ ...pageUrls(entries, q), unlisted: 2 });
      expect(s.urlListings?.open(crawl)?.size).toBe(3);
      // a URL row written after: that listing is no longer served
      await s.saveUrls([{ crawlId: "c1", urlKey: "s.test/docs/b", url: `${S}/docs/b`, depth: 1, state: URL_STATE.failed, version: 4, reason: "failed", detail: "HTTP 500", from: `${S}/docs/` }]);
      expect(s.urlListings?.open(crawl)).toBeNull();
      expect((await crawlUrlPage(s, crawl, { state: "failed", skip: 0, limit: 9 })).data.map((e) => e.url)).toEqual([`${S}/docs/b`]);
      // a running crawl is listed from its rows every time
      expect((await crawlUrlPage(s, { ...crawl, status: "scraping", version: 9 }, { skip: 0, limit: 9 })).total).toBe(4);
      expect(s.urlListings?.open({ ...crawl, status: "scraping", version: 9 })).toBeNull();
      await s.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
