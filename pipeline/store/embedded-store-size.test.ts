// An embedded store larger than V8's longest string (~512 MB) that holds one expired crawl: the start compacts the
// documents file, which built every kept record into one string and failed with "Invalid string length", so the
// store could not start at all. The rewrite now streams; the live crawl's documents are all still served after it.
// Documents are now in segment files (doc-segments.ts), which a start never rewrites: it deletes whole dead segments.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import type { CrawlRecord } from "./crawl-store.ts";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-store-size-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const crawl = (crawlId: string, expiresAt: number): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "completed", total: 1, completed: 1, failed: 0, creditsUsed: 0,
  tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 1, expiresAt, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const MB = 1024 * 1024;
const HOUR = 3_600_000;
const LIVE_DOCS = 560; // 1 MB each: past V8's string limit (2^29 - 24 characters)
const docBytes = () => {
  const segments = join(dir, "store", "documents");
  return readdirSync(segments).reduce((sum, f) => sum + statSync(join(segments, f)).size, 0);
};

it("starts with documents over 512 MB and an expired crawl, compacting without holding them in memory", async () => {
  const s1 = await EmbeddedCrawlStore.open(dir, 1_000);
  await s1.saveCrawls([crawl("live", 1e15), crawl("gone", 2 * HOUR)]);
  // "gone" alone in the first segment (the sweep an hour later rolls it), the live crawl after it
  await s1.insertDocuments([{ crawlId: "gone", seq: 0, urlKey: "g", finalKey: "g", scrapeId: "g", url: "https://s.test/g", statusCode: 200, credits: 1, storedAt: 1_000, doc: JSON.stringify({ markdown: "gone" }) }]);
  expect(await s1.deleteExpired(HOUR + 1_000, 24 * HOUR)).toEqual([]);
  const body = "x".repeat(MB);
  for (let seq = 0; seq < LIVE_DOCS; seq++) {
    await s1.insertDocuments([{ crawlId: "live", seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: `s${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1, storedAt: 1_000, doc: JSON.stringify({ markdown: body, metadata: { seq } }) }]);
  }
  await s1.close();
  const before = docBytes();
  expect(before).toBeGreaterThan(2 ** 29);

  // "gone" has expired by now: the start drops it (its segment)
  const s2 = await EmbeddedCrawlStore.open(dir, 3 * HOUR);
  expect(await s2.getCrawl("gone")).toBeNull();
  expect(await s2.pageDocuments("gone", 0, MB, 10)).toEqual({ docs: [], nextSkip: 0, more: false });
  const seqs: number[] = [];
  for (let skip = 0, more = true; more; ) {
    const page = await s2.pageDocuments("live", skip, 64 * MB, 100);
    seqs.push(...page.docs.map((d) => (JSON.parse(d) as { metadata: { seq: number } }).metadata.seq));
    ({ nextSkip: skip, more } = page);
  }
  expect(seqs).toEqual(Array.from({ length: LIVE_DOCS }, (_, i) => i));
  expect(docBytes()).toBeLessThan(before);
  // appends after the compaction land after the kept records, where the index says
  await s2.insertDocuments([{ crawlId: "live", seq: LIVE_DOCS, urlKey: "after", finalKey: "after", scrapeId: "a", url: "https://s.test/after", statusCode: 200, credits: 1, storedAt: 5_000, doc: JSON.stringify({ markdown: "after", metadata: { seq: LIVE_DOCS } }) }]);
  const last = await s2.pageDocuments("live", LIVE_DOCS, 64 * MB, 10);
  expect(last.docs.map((d) => (JSON.parse(d) as { markdown: string }).markdown)).toEqual(["after"]);
  await s2.close();
}, 300_000);
