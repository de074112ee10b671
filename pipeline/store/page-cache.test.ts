import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { frame } from "../runtime/append-log.ts";
import { EmbeddedPageCache, pageCacheKey, type CachedPage } from "./page-cache.ts";
import { CACHE_ROW_BYTES } from "./page-cache-index.ts";

const entry = (key: string, storedAt: number, body = "b"): CachedPage => ({ key, url: "http://s.test/", finalUrl: "http://s.test/", statusCode: 200, contentType: "text/html", body, storedAt });

/** Runs `fn` in a data directory of its own, removed afterwards. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const d = mkdtempSync(join(tmpdir(), "trawl-cache-"));
  try {
    await fn(d);
  } finally {
    rmSync(d, { recursive: true, force: true });
  }
}

describe("pageCacheKey", () => {
  it("ignores the fragment and header order and case; distinguishes headers", () => {
    expect(pageCacheKey("http://s.test/a#x")).toBe(pageCacheKey("http://s.test/a"));
    expect(pageCacheKey("http://s.test/a", { A: "1", b: "2" })).toBe(pageCacheKey("http://s.test/a", { b: "2", a: "1" }));
    expect(pageCacheKey("http://s.test/a", { a: "1" })).not.toBe(pageCacheKey("http://s.test/a", { a: "2" }));
    expect(pageCacheKey("http://s.test/a?q=1")).not.toBe(pageCacheKey("http://s.test/a"));
  });
});

describe("EmbeddedPageCache", () => {
  const dir = mkdtempSync(join(tmpdir(), "trawl-cache-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("serves the newest entry no older than asked, survives a reopen, and drops expired entries at open", async () => {
    const cache = await EmbeddedPageCache.open(dir, 0);
    cache.put([entry("k1", 1000, "old"), entry("k2", 5000, "two")]);
    cache.put([entry("k1", 3000, "new \u00e9\n\"quoted\"")]);
    await cache.close();
    expect((await cache.get("k1", 0))?.body).toBe("new \u00e9\n\"quoted\"");
    expect(await cache.get("k1", 3001)).toBeNull();
    expect(await cache.get("nope", 0)).toBeNull();
    await cache.close(); // the reads above opened a reader

    const reopened = await EmbeddedPageCache.open(dir, 2000); // k1@1000 expired
    expect((await reopened.get("k1", 0))?.body).toBe("new \u00e9\n\"quoted\"");
    expect((await reopened.get("k2", 0))?.body).toBe("two");
    await reopened.deleteBefore(4000);
    expect(await reopened.get("k1", 0)).toBeNull();
    expect((await reopened.get("k2", 0))?.body).toBe("two");
    await reopened.close();
  });

  it("after a torn write: the torn entry is dropped at open, entries put after it survive two reopens", () =>
    inTempDir(async (d) => {
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put([entry("a", 1, "A"), entry("b", 1, "B".repeat(1_000_000))]);
      await c1.close();
      const file = join(d, "store", "cache.jsonl");
      truncateSync(file, statSync(file).size - 400_000); // kill -9 in the middle of writing "b"
      const c2 = await EmbeddedPageCache.open(d, 0);
      expect(c2.repairedBytes).toBeGreaterThan(600_000);
      expect(await c2.get("b", 0)).toBeNull();
      c2.put([entry("c", 2, "C")]);
      await c2.close();
      for (let i = 0; i < 2; i++) {
        const c = await EmbeddedPageCache.open(d, 0);
        expect(c.repairedBytes).toBe(0);
        expect([(await c.get("a", 0))?.body, (await c.get("c", 0))?.body]).toEqual(["A", "C"]);
        c.put([entry(`r${i}`, 3, `R${i}`)]);
        await c.close();
      }
      // an expired entry forces a rewrite at open: positions recomputed for the framed file
      const last = await EmbeddedPageCache.open(d, 2);
      expect([await last.get("a", 0), (await last.get("c", 0))?.body, (await last.get("r1", 0))?.body]).toEqual([null, "C", "R1"]);
      await last.close();
    }));

  it("indexes many digest keys (past the index's first growth, rows of deleted entries reused) across a reopen", () =>
    inTempDir(async (d) => {
      const keys = Array.from({ length: 700 }, (_, i) => pageCacheKey(`http://s.test/p/${i}`));
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put(keys.map((k, i) => entry(k, i < 300 ? 10 : 20, `body ${i}`)));
      await c1.close();
      await c1.deleteBefore(15);
      c1.put([entry(pageCacheKey("http://s.test/new"), 30, "new")]);
      await c1.close();
      expect(await c1.get(keys[0] as string, 0)).toBeNull();
      expect((await c1.get(keys[699] as string, 0))?.body).toBe("body 699");
      expect((await c1.get(pageCacheKey("http://s.test/new"), 0))?.body).toBe("new");
      await c1.close();
      const c2 = await EmbeddedPageCache.open(d, 0);
      const bodies = await Promise.all(keys.map(async (k) => (await c2.get(k, 0))?.body));
      expect(bodies).toEqual(keys.map((_, i) => `body ${i}`));
      await c2.close();
    }));

  it("two digest keys sharing the indexed half: a miss for the older, never the other's page", () =>
    inTempDir(async (d) => {
      const a = "ab".repeat(16) + "0".repeat(32);
      const b = "ab".repeat(16) + "1".repeat(32);
      const cache = await EmbeddedPageCache.open(d, 0);
      cache.put([entry(a, 1, "A")]);
      cache.put([entry(b, 2, "B")]);
      await cache.close();
      expect(await cache.get(a, 0)).toBeNull();
      expect((await cache.get(b, 0))?.body).toBe("B");
      await cache.close();
    }));

  it("entries holding U+2028, U+2029, NUL, lone surrogates or CR survive a reopen, byte for byte", () =>
    inTempDir(async (d) => {
      // a line splitter cut these entries in two at U+2028 / U+2029, and the next open threw on half an entry
      const bodies = ["a\u2028b", "\u2029", "nul \u0000 and &#0;", "lone \ud800 \udfff surrogates", "cr\r lf\n crlf\r\n", `${"\u2028é".repeat(300_000)}x`];
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put(bodies.map((b, i) => entry(`k${i}`, 10, b)));
      await c1.close();
      for (let i = 0; i < 2; i++) {
        const c = await EmbeddedPageCache.open(d, 0);
        expect(await Promise.all(bodies.map(async (_, k) => (await c.get(`k${k}`, 0))?.body))).toEqual(bodies);
        c.put([entry(`again${i}`, 20, "\u2028")]);
        await c.close();
      }
    }));

  it("an unreadable entry never fails the start: it is dropped with a warning (count, positions), the rest is served", () =>
    inTempDir(async (d) => {
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put([entry("a", 10, "A\u2028")]);
      await c1.close();
      const file = join(d, "store", "cache.jsonl");
      const at = statSync(file).size;
      const bad = [frame("{not json"), '{"key":"half of a format 1 line', frame("null"), frame(JSON.stringify({ key: "no time" })), frame(JSON.stringify(entry("x", 10))).replace('"x"', '"y"')];
      // an entry after them, as the next run appended it
      appendFileSync(file, [...bad, frame(JSON.stringify(entry("b", 20, "B")))].map((l) => `${l}\n`).join(""));
      const positions = bad.map((_, i) => at + bad.slice(0, i).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0));
      const warnings: { msg: string; dropped?: number; positions?: number[]; pos?: number }[] = [];
      const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(JSON.parse(line)) });
      const c3 = await EmbeddedPageCache.open(d, 0, logger);
      expect(warnings).toEqual([expect.objectContaining({ msg: expect.stringContaining("unreadable entries dropped"), dropped: 5, positions })]);
      expect([(await c3.get("a", 0))?.body, (await c3.get("b", 0))?.body, await c3.get("x", 0)]).toEqual(["A\u2028", "B", null]);
      await c3.close();
      // the file was rewritten without them: the next start finds nothing to drop
      expect(readFileSync(file, "utf8")).not.toContain("not json");
      const c4 = await EmbeddedPageCache.open(d, 0, logger);
      expect(warnings).toHaveLength(1);
      expect((await c4.get("b", 0))?.body).toBe("B");
      // an entry spoiled on disk after the start is a miss with a warning, not a failed fetch
      const text = readFileSync(file, "utf8");
      writeFileSync(file, text.replace('{"key":"b"', '#"key":"b"'));
      expect(await c4.get("b", 0)).toBeNull();
      expect(warnings[1]).toMatchObject({ msg: expect.stringContaining("unreadable entry ignored"), pos: Buffer.byteLength(text.slice(0, text.indexOf('{"key":"b"'))) });
      await c4.close();
    }));

  it("a start reads no entry: the index on disk says where each is; entries without a row (a crash) are indexed at open", () =>
    inTempDir(async (d) => {
      const keys = Array.from({ length: 2000 }, (_, i) => pageCacheKey(`http://s.test/p/${i}`));
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put(keys.map((k, i) => entry(k, 10, `body ${i}`)));
      await c1.close();
      const file = join(d, "store", "cache.jsonl");
      // a byte of the first entry damaged, and the last 10 rows of the index lost (kill -9 between entries and rows)
      const text = readFileSync(file, "latin1");
      writeFileSync(file, text.replace('{"key":', '#"key":'), "latin1"); // the first entry's JSON
      truncateSync(join(d, "store", "cache.idx"), statSync(join(d, "store", "cache.idx")).size - 10 * CACHE_ROW_BYTES - 7);
      const warnings: { msg: string }[] = [];
      const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(JSON.parse(line)) });
      const c2 = await EmbeddedPageCache.open(d, 0, logger);
      expect(warnings).toEqual([]); // the damaged entry was not read
      expect((await c2.get(keys[1999] as string, 0))?.body).toBe("body 1999");
      expect((await c2.get(keys[1990] as string, 0))?.body).toBe("body 1990");
      expect(await c2.get(keys[0] as string, 0)).toBeNull(); // now it is: a miss, with a warning
      expect(warnings).toHaveLength(1);
      await c2.close();
    }));

  it("holds at most 16 bytes of memory an entry; the sweep rewrites the file without expired entries once they are half of it", () =>
    inTempDir(async (d) => {
      const keys = Array.from({ length: 20_000 }, (_, i) => pageCacheKey(`http://s.test/p/${i}`));
      const c1 = await EmbeddedPageCache.open(d, 0);
      c1.put(keys.map((k, i) => entry(k, i < 12_000 ? 10 : 20, `body ${i}`)));
      c1.put([entry(keys[12_500] as string, 30, "newer")]);
      await c1.close();
      expect((await c1.get(keys[5] as string, 0))?.body).toBe("body 5");
      const index = (c1 as unknown as { index: { memoryBytes: number } }).index;
      expect(index.memoryBytes / 20_000).toBeLessThanOrEqual(16);
      const file = join(d, "store", "cache.jsonl");
      const before = statSync(file).size;
      await c1.deleteBefore(15);
      expect(statSync(file).size).toBeLessThan(before / 2);
      expect(await c1.get(keys[5] as string, 0)).toBeNull();
      expect([(await c1.get(keys[12_000] as string, 0))?.body, (await c1.get(keys[12_500] as string, 0))?.body]).toEqual(["body 12000", "newer"]);
      c1.put([entry("after", 40, "A")]);
      await c1.close();
      const c2 = await EmbeddedPageCache.open(d, 0);
      expect([(await c2.get(keys[19_999] as string, 0))?.body, (await c2.get("after", 0))?.body, await c2.get(keys[5] as string, 0)]).toEqual(["body 19999", "A", null]);
      await c2.close();
    }));

  it("memory only without a directory", async () => {
    const cache = await EmbeddedPageCache.open(null, 0);
    cache.put([entry("k", 10)]);
    expect((await cache.get("k", 5))?.body).toBe("b");
    expect(await cache.get("k", 11)).toBeNull();
  });
});
