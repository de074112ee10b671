// A crash in the middle of a large write must not cost a document later: the torn record is dropped at open, and
// what is written after the restart is never glued onto it.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";
import type { DocumentRow } from "./crawl-store.ts";
import { RETENTION_MS, scrapeJobId } from "../runtime/constants.ts";
import { readScrape } from "../usecases/scrape-page.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const doc = (seq: number): DocumentRow => ({
  crawlId: "c1", seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: `s${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1,
  storedAt: 1, doc: JSON.stringify({ markdown: "x".repeat(1_000_000), metadata: { seq } }),
});

async function served(): Promise<number[]> {
  const store = await EmbeddedCrawlStore.open(dir, 0);
  const page = await store.pageDocuments("c1", 0, 1e12, 1000);
  await store.close();
  return page.docs.map((d) => (JSON.parse(d) as { metadata: { seq: number } }).metadata.seq);
}

describe("EmbeddedCrawlStore after a torn write", () => {
  it("drops the torn document at open and keeps every document written after the restart", async () => {
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([{ crawlId: "c1", version: 1, teamId: "t", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true }, webhook: "", status: "scraping", total: 3, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "" }]);
    await s1.insertDocuments([doc(0), doc(1)]);
    await s1.close();
    // kill -9 in the middle of writing document 2 (1 MB): half of its line on disk
    const line = JSON.stringify({ c: "c1", s: 2, k: "k2", f: "k2", t: 1, d: JSON.parse(doc(2).doc) });
    appendFileSync(join(dir, "store", "documents", "000001.jsonl"), line.slice(0, 500_000)); // the current segment

    const s2 = await EmbeddedCrawlStore.open(dir, 0);
    expect(s2.repairedBytes).toBe(500_000);
    // the sink writes document 2 again after the restart (its offset was never committed), then document 3
    await s2.insertDocuments([doc(2)]);
    await s2.insertDocuments([doc(3)]);
    expect((await s2.pageDocuments("c1", 0, 1e12, 1000)).docs).toHaveLength(4);
    await s2.close();
    // and again after the next restart: nothing lost
    expect(await served()).toEqual([0, 1, 2, 3]);
  });
});

describe("EmbeddedCrawlStore files of an earlier release", () => {
  it("reads a crawl record written before tokens were counted as 0 tokens, and counts its usage", async () => {
    const old = mkdtempSync(join(tmpdir(), "trawl-store-old-"));
    try {
      const record = {
        crawlId: "c-old", version: 3, teamId: "t", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
        webhook: "", status: "completed", total: 2, completed: 2, failed: 0, creditsUsed: 2, discoveryDone: true, createdAt: 7, updatedAt: 9, completedAt: 9, expiresAt: 1e15, error: "",
      };
      mkdirSync(join(old, "store"), { recursive: true });
      // a format-1 line (unframed), as the earliest releases wrote the journal
      appendFileSync(join(old, "store", "journal.jsonl"), `${JSON.stringify({ t: "crawl", r: record })}\n`);
      const store = await EmbeddedCrawlStore.open(old, 0);
      expect((await store.getCrawl("c-old"))?.tokensUsed).toBe(0);
      expect(await store.usageByCrawl("t")).toEqual(new Map([["c-old", { credits: 2, tokens: 0, at: 7 }]]));
      await store.close();
    } finally {
      rmSync(old, { recursive: true, force: true });
    }
  });
});

describe("EmbeddedCrawlStore records holding U+2028, U+2029, NUL, lone surrogates", () => {
  it("serves them byte for byte after a reopen, none read as damaged", async () => {
    const d = mkdtempSync(join(tmpdir(), "trawl-store-chars-"));
    try {
      // a line splitter cut these records in two: the documents were skipped (and counted damaged) after a restart
      const texts = ["a\u2028b", "\u2029", "nul \u0000", "lone \ud800 \udfff", "cr\r", `${"\u2028é".repeat(300_000)}x`];
      const row = (seq: number, markdown: string): DocumentRow => ({ ...doc(seq), crawlId: "c2", urlKey: `k\u2028${seq}`, finalKey: `é${seq}`, doc: JSON.stringify({ markdown, metadata: { seq, title: markdown.slice(0, 20) } }) });
      const s1 = await EmbeddedCrawlStore.open(d, 0);
      await s1.saveCrawls([{ crawlId: "c2", version: 1, teamId: "t", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true }, webhook: "", status: "scraping", total: 6, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "\u2028\u2029" }]);
      const rows = texts.map((t, i) => row(i, t));
      await s1.insertDocuments(rows);
      await s1.close();
      const s2 = await EmbeddedCrawlStore.open(d, 0);
      expect(s2.damagedRecords).toBe(0);
      expect((await s2.getCrawl("c2"))?.error).toBe("\u2028\u2029");
      expect((await s2.pageDocuments("c2", 0, 1e12, 1000)).docs).toEqual(rows.map((r) => r.doc));
      await s2.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("EmbeddedCrawlStore expiry of single scrapes and idempotency keys", () => {
  it("serves a scrape until exactly the retention after it was stored, swept or not", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    const at = 1_000_000_000_000;
    const job = scrapeJobId("team-e", "s-1");
    await store.insertDocuments([{ ...doc(0), crawlId: job, storedAt: at, doc: JSON.stringify({ markdown: "scraped" }) }]);
    expect(await readScrape(store, "team-e", "s-1", at + RETENTION_MS - 1)).toContain("scraped");
    expect(await readScrape(store, "team-e", "s-1", at + RETENTION_MS + 1)).toBeUndefined();
  });

  it("honours an idempotency key until exactly the retention after its claim, swept or not", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    const at = 1_000_000_000_000;
    expect(await store.claimIdempotencyKey("team-e", "key-1", at)).toBe(true);
    expect(await store.claimIdempotencyKey("team-e", "key-1", at + RETENTION_MS - 1)).toBe(false);
    // no sweep ran in between: the old claim no longer counts
    expect(await store.claimIdempotencyKey("team-e", "key-1", at + RETENTION_MS + 1)).toBe(true);
    expect(await store.claimIdempotencyKey("team-e", "key-1", at + RETENTION_MS + 2)).toBe(false);
  });
});
