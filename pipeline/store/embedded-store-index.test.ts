// The embedded store's document index lives on disk (doc-index.ts): a start reads neither the documents nor the
// index, only what was written after index/mark; a crash between a document's write and its row's is repaired there.
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CrawlRecord, DocumentRow } from "./crawl-store.ts";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";
import { ROW_BYTES } from "./doc-index.ts";
import { frame } from "../runtime/append-log.ts";

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "trawl-store-index-"));
  dirs.push(d);
  return d;
};

const crawl = (crawlId: string): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "scraping", total: 1, completed: 0, failed: 0, creditsUsed: 0,
  tokensUsed: 0, discoveryDone: false, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "",
  options: { limit: 10_000, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const doc = (crawlId: string, seq: number, key = `k${seq}`): DocumentRow => ({
  crawlId, seq, urlKey: key, finalKey: `${key}/f`, scrapeId: `s${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1, storedAt: 1000 + seq,
  doc: JSON.stringify({ markdown: `page ${seq}`, metadata: { seq } }),
});
const seqs = async (s: EmbeddedCrawlStore, id: string) => {
  const out: number[] = [];
  for (let skip = 0, more = true; more; ) {
    const page = await s.pageDocuments(id, skip, 1e9, 7);
    out.push(...page.docs.map((d) => (JSON.parse(d) as { metadata: { seq: number } }).metadata.seq));
    ({ nextSkip: skip, more } = page);
  }
  return out;
};
const indexFile = (dir: string, id: string, ext: string) => join(dir, "store", "index", `${Buffer.from(id).toString("base64url")}.${ext}`);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe("EmbeddedCrawlStore index on disk", () => {
  it("a start reads no document written before the mark (a damaged one there is not even seen)", async () => {
    const dir = tempDir();
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([crawl("c")]);
    for (let i = 0; i < 50; i += 10) await s1.insertDocuments(range(10).map((k) => doc("c", i + k)));
    await s1.close();
    // damage the 20th document's bytes (same length): a start that read the documents would count it
    const seg = join(dir, "store", "documents", "000001.jsonl");
    const fd = openSync(seg, "r+");
    writeSync(fd, "Z", Math.floor(statSync(seg).size / 2));
    closeSync(fd);
    const s2 = await EmbeddedCrawlStore.open(dir, 0);
    expect(s2.damagedRecords).toBe(0);
    expect((await s2.documentKeys("c")).keys).toHaveLength(50);
    await s2.close();
  });

  it("after a crash between documents and their index rows, indexes them again at start: none lost, none twice", async () => {
    const dir = tempDir();
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([crawl("c"), crawl("d")]);
    for (let i = 0; i < 60; i += 6) await s1.insertDocuments([...range(6).map((k) => doc("c", i + k)), doc("d", i / 6)]);
    const mark = join(dir, "store", "index", "mark");
    const markAtEnd = (await import("node:fs")).readFileSync(mark, "utf8");
    // kill -9 (no close): the index kept 40.5 of c's rows and 45.5 of its keys (written before the rows), d's index was never written, and the
    // mark is back at the start of the segment (written before those inserts' documents)
    truncateSync(indexFile(dir, "c", "idx"), 40 * ROW_BYTES + 20);
    const keys = (await import("node:fs")).readFileSync(indexFile(dir, "c", "keys"), "utf8").split("\n");
    writeFileSync(indexFile(dir, "c", "keys"), `${keys.slice(0, 45).join("\n")}\n${keys[45]?.slice(0, 5)}`);
    rmSync(indexFile(dir, "d", "idx"));
    rmSync(indexFile(dir, "d", "keys"));
    writeFileSync(mark, JSON.stringify({ seg: 1, pos: 0 }).padEnd(63) + "\n");
    expect(markAtEnd).not.toEqual(JSON.stringify({ seg: 1, pos: 0 }).padEnd(63) + "\n");

    const s2 = await EmbeddedCrawlStore.open(dir, 0);
    expect(await seqs(s2, "c")).toEqual(range(60));
    expect(await seqs(s2, "d")).toEqual(range(10));
    const dk = await s2.documentKeys("c");
    expect(dk.keys).toEqual(range(60).map((i) => `k${i}`));
    expect(dk.finalKeys[59]).toBe("k59/f");
    expect(dk.nextSeq).toBe(60);
    // the sink writes again what was never acknowledged: a key stored is not indexed twice
    await s2.insertDocuments([doc("c", 60, "k3"), doc("c", 61)]);
    expect(await seqs(s2, "c")).toEqual([...range(60), 61]);
    await s2.close();
    const s3 = await EmbeddedCrawlStore.open(dir, 0);
    expect(await seqs(s3, "c")).toEqual([...range(60), 61]);
    expect(s3.damagedRecords).toBe(0);
    await s3.close();
  });

  it("an insert whose index rows failed to be written keeps the mark before it: the next start indexes its documents", async () => {
    const dir = tempDir();
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([crawl("c"), crawl("e")]);
    await s1.insertDocuments([doc("c", 0)]);
    // e's index cannot be written (as with ENOSPC or EIO): its insert fails after its documents were written
    (await import("node:fs")).mkdirSync(indexFile(dir, "e", "idx"));
    await expect(s1.insertDocuments([doc("e", 0), doc("e", 1)])).rejects.toThrow();
    await s1.insertDocuments([doc("c", 1)]);
    rmSync(indexFile(dir, "e", "idx"), { recursive: true });
    // kill -9 (no close): the next start indexes what the mark leaves after it, e's documents among them
    const s2 = await EmbeddedCrawlStore.open(dir, 0);
    expect(await seqs(s2, "e")).toEqual([0, 1]);
    expect(await seqs(s2, "c")).toEqual([0, 1]);
    await s2.close();
  });

  it("an extract job's empty index (its first row's write failed) does not stop the retention sweep, and goes", async () => {
    const dir = tempDir();
    const s0 = await EmbeddedCrawlStore.open(dir, 0);
    await s0.close();
    writeFileSync(indexFile(dir, "extract:x", "idx"), "");
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([{ ...crawl("old"), status: "completed", expiresAt: 10 }]);
    expect(await s1.deleteExpired(20, 5)).toEqual(["old"]);
    expect(readdirSync(join(dir, "store", "index")).filter((f) => f !== "mark")).toEqual([]);
    await s1.close();
  });

  it("an expired crawl's index files go with it", async () => {
    const dir = tempDir();
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    await s1.saveCrawls([{ ...crawl("old"), status: "completed", expiresAt: 10 }, crawl("live")]);
    await s1.insertDocuments([doc("old", 0), doc("live", 0)]);
    expect(await s1.deleteExpired(20, 5)).toEqual(["old"]);
    expect(readdirSync(join(dir, "store", "index")).filter((f) => f !== "mark")).toEqual([`${Buffer.from("live").toString("base64url")}.idx`, `${Buffer.from("live").toString("base64url")}.keys`]);
    await s1.close();
  });

  it("moves the URL rows of an earlier release's journal to the crawl's own log, once", async () => {
    const dir = tempDir();
    const row = (key: string, state: 0 | 1, version: number, url: string) => ({ crawlId: "c", urlKey: key, url, depth: 1, state, version });
    const lines = [
      { t: "crawl", r: crawl("c") },
      { t: "urls", rows: [row("a", 0, 1, "https://s.test/a"), row("b", 0, 1, "https://s.test/b")] },
      { t: "cancel", id: "x", at: 5 },
      { t: "urls", rows: [row("a", 1, 2, "")] },
    ];
    (await import("node:fs")).mkdirSync(join(dir, "store"), { recursive: true });
    writeFileSync(join(dir, "store", "journal.jsonl"), lines.map((l) => `${frame(JSON.stringify(l))}\n`).join(""));
    const expected = [{ ...row("a", 1, 2, "https://s.test/a") }, row("b", 0, 1, "https://s.test/b")];
    const s1 = await EmbeddedCrawlStore.open(dir, 0);
    expect(await s1.loadUrls("c")).toEqual(expected);
    await s1.saveUrls([row("b", 1, 2, "")]);
    await s1.close();
    const journal = (await import("node:fs")).readFileSync(join(dir, "store", "journal.jsonl"), "utf8");
    expect(journal).not.toContain('"t":"urls"');
    expect(journal).toContain('"t":"cancel"');
    const s2 = await EmbeddedCrawlStore.open(dir, 0);
    expect(await s2.loadUrls("c")).toEqual([expected[0], row("b", 1, 2, "https://s.test/b")]);
    expect(await s2.loadUrls("other")).toEqual([]);
    expect(await s2.cancelled(["x"])).toEqual(new Set(["x"]));
    await s2.close();
  });
});
