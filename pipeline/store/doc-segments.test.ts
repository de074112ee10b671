// The embedded store gives back the disk of expired crawls while it runs: documents are in segment files, and the
// retention sweep deletes a segment once no live crawl has a document in it. Before segments, one documents.jsonl
// only shrank at a start: a Trawl that ran for weeks never gave back a byte.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CrawlRecord, DocumentRow } from "./crawl-store.ts";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";
import { frame } from "../runtime/append-log.ts";
import { RETENTION_MS } from "../runtime/constants.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "trawl-segments-"));
  dirs.push(d);
  return d;
};

const HOUR = 3_600_000;
const T0 = 1_764_000_000_000;
const crawl = (crawlId: string, expiresAt: number): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "completed", total: 1, completed: 1, failed: 0, creditsUsed: 0,
  tokensUsed: 0, discoveryDone: true, createdAt: T0, updatedAt: T0, completedAt: T0, expiresAt, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const doc = (crawlId: string, seq: number, storedAt = T0): DocumentRow => ({
  crawlId, seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: `${crawlId}-${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1,
  storedAt, doc: JSON.stringify({ markdown: `${crawlId} ${seq} ${"x".repeat(3_000)}`, metadata: { seq } }),
});

async function seqs(store: EmbeddedCrawlStore, crawlId: string): Promise<number[]> {
  const out: number[] = [];
  for (let skip = 0, more = true; more; ) {
    const page = await store.pageDocuments(crawlId, skip, 1e9, 7);
    out.push(...page.docs.map((d) => (JSON.parse(d) as { metadata: { seq: number } }).metadata.seq));
    ({ nextSkip: skip, more } = page);
  }
  return out;
}
const segmentFiles = (dir: string) => readdirSync(join(dir, "store", "documents")).filter((f) => f.endsWith(".jsonl")).sort();
/** Bytes of every file under `dir`/store, whatever their layout. */
const storeBytes = (dir: string) => readdirSync(join(dir, "store"), { recursive: true, encoding: "utf8" }).reduce((sum, f) => sum + statSync(join(dir, "store", f)).size, 0);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("EmbeddedCrawlStore document segments", () => {
  it("deletes the segments of an expired crawl at the sweep, keeps serving the live crawl, appends and reopens", async () => {
    const dir = tempDir();
    const opts = { segmentBytes: 20_000 }; // ~6 documents a segment
    const s1 = await EmbeddedCrawlStore.open(dir, T0, opts);
    await s1.saveCrawls([crawl("old", T0 + RETENTION_MS), crawl("live", T0 + 1000 * RETENTION_MS)]);
    // the old crawl alone (its own segments), then both together, then the live crawl alone
    for (let i = 0; i < 20; i++) await s1.insertDocuments([doc("old", i)]);
    for (let i = 20; i < 30; i++) await s1.insertDocuments([doc("old", i), doc("live", i - 20)]);
    for (let i = 10; i < 40; i++) await s1.insertDocuments([doc("live", i)]);
    const bytesBefore = storeBytes(dir);

    // a day later the old crawl has expired: the sweep deletes the segments that held only its documents
    expect(await s1.deleteExpired(T0 + RETENTION_MS + HOUR, RETENTION_MS)).toEqual(["old"]);
    expect(bytesBefore - storeBytes(dir)).toBeGreaterThan(12 * 3_000); // at least 12 of the 20 documents only "old" has (two whole segments)
    const after = segmentFiles(dir);
    const before = range(1, Number(after.at(-1)?.slice(0, 6)) + 1).map((id) => `${String(id).padStart(6, "0")}.jsonl`);
    expect(after.length).toBeLessThan(before.length);
    expect(after).toEqual(before.slice(before.length - after.length)); // the first ones went
    expect(after.length).toBeGreaterThanOrEqual(Math.ceil((40 * 3_100) / 20_000)); // not more than old alone filled
    expect(await seqs(s1, "live")).toEqual(range(0, 40));
    expect(await s1.getCrawl("old")).toBeNull();

    // appends go on where they were, and everything is served again after a reopen
    await s1.insertDocuments([doc("live", 40), doc("live", 41)]);
    expect(await seqs(s1, "live")).toEqual(range(0, 42));
    await s1.close();
    const s2 = await EmbeddedCrawlStore.open(dir, T0 + RETENTION_MS + 2 * HOUR, opts);
    expect(await seqs(s2, "live")).toEqual(range(0, 42));
    expect(s2.damagedRecords).toBe(0);
    await s2.insertDocuments([doc("live", 42)]);
    expect(await seqs(s2, "live")).toEqual(range(0, 43));
    await s2.close();
  });

  it("rolls a segment older than the age limit at the sweep, so a slow store gives back an expired crawl's disk too", async () => {
    const dir = tempDir();
    const s = await EmbeddedCrawlStore.open(dir, T0); // default segment size: a few small documents never fill one
    await s.saveCrawls([crawl("old", T0 + RETENTION_MS), crawl("live", T0 + 1000 * RETENTION_MS)]);
    await s.insertDocuments([doc("old", 0), doc("old", 1)]);
    expect(await s.deleteExpired(T0 + HOUR, RETENTION_MS)).toEqual([]); // the segment of "old" is an hour old: rolled
    await s.insertDocuments([doc("live", 0, T0 + HOUR)]);
    expect(segmentFiles(dir)).toEqual(["000001.jsonl", "000002.jsonl"]);
    expect(await s.deleteExpired(T0 + RETENTION_MS + 2 * HOUR, RETENTION_MS)).toEqual(["old"]);
    expect(segmentFiles(dir)).not.toContain("000001.jsonl");
    expect(await seqs(s, "live")).toEqual([0]);
    await s.close();
  });

  it("finishes a read of an expiring crawl's document that was in flight when the sweep deleted its segment", async () => {
    const dir = tempDir();
    const s = await EmbeddedCrawlStore.open(dir, T0);
    await s.saveCrawls([crawl("old", T0 + RETENTION_MS)]);
    await s.insertDocuments([doc("old", 0)]);
    const page = s.pageDocuments("old", 0, 1e9, 10);
    await s.deleteExpired(T0 + RETENTION_MS + HOUR, RETENTION_MS); // rolls the segment (a day old), then deletes it
    expect(segmentFiles(dir)).toEqual([]);
    expect((await page).docs.map((d) => (JSON.parse(d) as { metadata: { seq: number } }).metadata.seq)).toEqual([0]);
    await s.close();
  });

  it("keeps at most maxReaders read handles open, however many segments a crawl's documents are in", async () => {
    const dir = tempDir();
    const s = await EmbeddedCrawlStore.open(dir, T0, { segmentBytes: 7_000, maxReaders: 2 }); // ~2 documents a segment
    await s.saveCrawls([crawl("live", T0 + 1000 * RETENTION_MS)]);
    for (let i = 0; i < 30; i++) await s.insertDocuments([doc("live", i)]);
    expect(segmentFiles(dir).length).toBeGreaterThanOrEqual(10);
    const fds = () => readdirSync("/proc/self/fd").length;
    const before = fds();
    expect(await seqs(s, "live")).toEqual(range(0, 30));
    expect(await seqs(s, "live")).toEqual(range(0, 30));
    expect(fds() - before).toBeLessThanOrEqual(2);
    await s.close();
  });

  it("reads the single documents.jsonl of an earlier release, appends to segments, and deletes it once its crawl expired", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "store"), { recursive: true });
    const journal = [crawl("old", T0 + RETENTION_MS), crawl("live", T0 + 1000 * RETENTION_MS)].map((r) => frame(JSON.stringify({ t: "crawl", r })) + "\n");
    writeFileSync(join(dir, "store", "journal.jsonl"), journal.join(""));
    // format 2-3 document lines (framed), and a format 1 one (unframed), as releases before segments wrote them
    const line = (r: DocumentRow) => `${JSON.stringify({ c: r.crawlId, s: r.seq, k: r.urlKey, f: r.finalKey, t: r.storedAt, sc: r.statusCode }).slice(0, -1)},"d":${r.doc}}`;
    const legacy = join(dir, "store", "documents.jsonl");
    writeFileSync(legacy, [frame(line(doc("old", 0))), line(doc("old", 1)), frame(line(doc("live", 0)))].join("\n") + "\n");

    const s1 = await EmbeddedCrawlStore.open(dir, T0);
    expect(await seqs(s1, "old")).toEqual([0, 1]);
    expect(await seqs(s1, "live")).toEqual([0]);
    await s1.insertDocuments([doc("live", 1)]);
    expect(await seqs(s1, "live")).toEqual([0, 1]);
    await s1.close();
    expect(segmentFiles(dir)).toEqual(["000001.jsonl"]);

    const s2 = await EmbeddedCrawlStore.open(dir, T0 + HOUR);
    expect(await seqs(s2, "live")).toEqual([0, 1]);
    // the old crawl expires, but the live one still has a document in the old file: it stays
    await s2.deleteExpired(T0 + RETENTION_MS + HOUR, RETENTION_MS);
    expect(existsSync(legacy)).toBe(true);
    expect(await seqs(s2, "live")).toEqual([0, 1]);
    await s2.close();

    // once every crawl in it has gone (here at a start), the old file is deleted whole, never rewritten
    const legacyBytes = statSync(legacy).size;
    expect(legacyBytes).toBeGreaterThan(0);
    const s3 = await EmbeddedCrawlStore.open(dir, T0 + 1001 * RETENTION_MS);
    expect(existsSync(legacy)).toBe(false);
    expect(await s3.getCrawl("live")).toBeNull();
    await s3.close();
  });
});
