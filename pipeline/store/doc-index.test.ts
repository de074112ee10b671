import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DocIndex, FdPool, ROW_BYTES } from "./doc-index.ts";
import { fingerprint, FingerprintMap, FingerprintSet, KeySet } from "./fingerprint-set.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-doc-index-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ref = (seq: number, urlKey: string, storedAt?: number) => ({ seq, urlKey, finalKey: `${urlKey}/final`, seg: 1, pos: seq * 100, len: 90, docStart: 40, ...(storedAt === undefined ? {} : { storedAt }) });
const paths = (name: string) => ({ idx: join(dir, `${name}.idx`), keys: join(dir, `${name}.keys`) });

describe.each([["on disk", "a"], ["in memory", null]] as const)("DocIndex %s", (_, name) => {
  const open = (pool = new FdPool(2)) => new DocIndex(name === null ? null : paths(name), pool);

  it("keeps the first row of a url key, in the order added, and finds rows by seq", async () => {
    const index = open();
    expect(index.add([0, 1, 3].map((seq) => ref(seq, `k${seq}`, 1000 + seq)))).toBe(3);
    expect(index.add([ref(7, "k7", 1007), ref(8, "k8", 1008), ref(9, "k3", 2000)])).toBe(2); // a later row of a stored key is not indexed
    expect(index.size).toBe(5);
    expect((await index.keys()).map(([k, f, seq]) => `${k} ${f} ${seq}`)).toEqual(["k0 k0/final 0", "k1 k1/final 1", "k3 k3/final 3", "k7 k7/final 7", "k8 k8/final 8"]);
    expect(index.row(2)).toMatchObject({ seq: 3, pos: 300, len: 90, docStart: 40, seg: 1, storedAt: 1003, statusCode: 200 });
    expect([0, 1, 2, 3, 4, 8, 9].map((s) => index.firstAtLeast(s))).toEqual([0, 1, 2, 2, 3, 4, 5]);
    expect(index.range(3, 10).map((r) => r.seq)).toEqual([7, 8]);
    expect(index.newestSuccess()).toBe(1008);
    expect(index.last()).toEqual({ seg: 1, pos: 800 });
  });

  it("a row stored without a time reads as 0", () => {
    const index = new DocIndex(name === null ? null : paths(`${name}-t`), new FdPool());
    index.add([ref(0, "a"), ref(1, "b", 1_764_000_000_000)]);
    expect([index.storedAtOf(0), index.storedAtOf(1)]).toEqual([0, 1_764_000_000_000]);
    expect([index.storedAtOf(0, 42), index.storedAtOf(1, 42)]).toEqual([42, 1_764_000_000_000]);
  });
});

describe("DocIndex on disk", () => {
  it("is read back by a new instance without loading it, keeps deduplicating, and cuts a torn last row", async () => {
    const pool = new FdPool(1); // every file reopened: handles are closed past the pool's size
    const first = new DocIndex(paths("b"), pool);
    first.add(Array.from({ length: 1000 }, (_, i) => ref(i, `k${i}`, i)));
    first.release();
    const idx = paths("b").idx;
    expect(statSync(idx).size).toBe(1000 * ROW_BYTES);
    truncateSync(idx, 1000 * ROW_BYTES - 5); // a crash in the middle of the last row's write
    const again = new DocIndex(paths("b"), pool);
    expect(again.size).toBe(999);
    expect(again.memoryBytes).toBe(0); // nothing read yet
    expect(again.firstAtLeast(500)).toBe(500);
    expect(again.add([ref(1000, "k5"), ref(1001, "k999"), ref(1002, "new")])).toBe(2); // k999's row was the torn one
    expect(again.range(998, 10).map((r) => r.seq)).toEqual([998, 1001, 1002]);
    again.remove();
    expect(new DocIndex(paths("b"), pool).size).toBe(0);
  });
});

describe("DocIndex on disk, a failed write", () => {
  it("indexes the rows of a failed add when it is tried again (the fingerprints are not kept for rows not written)", async () => {
    const pool = new FdPool();
    const { idx } = paths("w");
    const index = new DocIndex(paths("w"), pool);
    expect(index.add([ref(0, "k0")])).toBe(1);
    // the next write of the index file fails (as ENOSPC would), after the keys' write went through
    const saved = readFileSync(idx);
    pool.closeAll();
    unlinkSync(idx);
    mkdirSync(idx);
    expect(() => index.add([ref(1, "k1")])).toThrow();
    rmSync(idx, { recursive: true });
    writeFileSync(idx, saved);
    // the sink tries the batch again: its row is written this time
    expect(index.add([ref(1, "k1")])).toBe(1);
    expect(index.size).toBe(2);
    expect(index.range(0, 10).map((r) => r.seq)).toEqual([0, 1]);
    expect((await index.keys()).map(([k]) => k)).toEqual(["k0", "k1", "k1"]); // the failed add's key too (a repeat, read once)
    index.remove();
  });
});

describe("FingerprintSet", () => {
  it("holds 300,000 keys in at most 16 bytes each", () => {
    const set = new FingerprintSet();
    let added = 0;
    for (let i = 0; i < 300_000; i++) {
      const [hi, lo] = fingerprint(`https://h${i % 1000}.test/p/${i}`);
      if (set.add(hi, lo)) added++;
    }
    expect(added).toBe(300_000);
    expect(set.size).toBe(300_000);
    expect(set.bytes / set.size).toBeLessThanOrEqual(16);
    const [hi, lo] = fingerprint("https://h7.test/p/7");
    expect(set.has(hi, lo)).toBe(true);
    expect(set.add(hi, lo)).toBe(false);
    const [h2, l2] = fingerprint("https://h7.test/p/x");
    expect(set.has(h2, l2)).toBe(false);
  });
});

describe("FingerprintMap and KeySet (the sink's cursor)", () => {
  it("map keys to values in at most 24 bytes a key, the last value set wins", () => {
    const map = new FingerprintMap();
    const set = new KeySet();
    for (let i = 0; i < 100_000; i++) {
      map.set(`https://s.test/${i}`, i);
      if (i % 2 === 0) set.add(`https://s.test/${i}/final`);
    }
    map.set("https://s.test/7", 70);
    expect(map.size).toBe(100_000);
    expect(map.bytes / map.size).toBeLessThanOrEqual(24);
    expect([map.get("https://s.test/0"), map.get("https://s.test/7"), map.get("https://s.test/99999"), map.get("https://s.test/x")]).toEqual([0, 70, 99_999, undefined]);
    expect([set.has("https://s.test/4/final"), set.has("https://s.test/5/final")]).toEqual([true, false]);
  });
});
