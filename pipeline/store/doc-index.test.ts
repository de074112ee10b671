import { describe, expect, it } from "vitest";
import { DocIndex } from "./doc-index.ts";

const ref = (seq: number, urlKey: string, storedAt?: number) => ({ seq, urlKey, finalKey: `${urlKey}/final`, seg: 1, pos: seq * 100, len: 90, docStart: 40, ...(storedAt === undefined ? {} : { storedAt }) });

describe("DocIndex", () => {
  it("keeps the first row of a url key, in the order added, and finds rows by seq", () => {
    const index = new DocIndex();
    for (const seq of [0, 1, 3, 7, 8]) index.add(ref(seq, `k${seq}`, 1000 + seq));
    index.add(ref(9, "k3", 2000)); // a later row of a stored key is not indexed
    expect(index.size).toBe(5);
    expect([...index.keys]).toEqual(["k0", "k1", "k3", "k7", "k8"]);
    expect(index.finalKey).toEqual(["k0/final", "k1/final", "k3/final", "k7/final", "k8/final"]);
    expect([index.pos[2], index.len[2], index.docStart[2]]).toEqual([300, 90, 40]);
    expect([0, 1, 2, 3, 4, 8, 9].map((s) => index.firstAtLeast(s))).toEqual([0, 1, 2, 2, 3, 4, 5]);
  });

  it("a row stored without a time reads as 0", () => {
    const index = new DocIndex();
    index.add(ref(0, "a"));
    index.add(ref(1, "b", 1_764_000_000_000));
    expect([index.storedAtOf(0), index.storedAtOf(1)]).toEqual([0, 1_764_000_000_000]);
    expect([index.storedAtOf(0, 42), index.storedAtOf(1, 42)]).toEqual([42, 1_764_000_000_000]);
  });
});
