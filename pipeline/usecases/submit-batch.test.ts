import { describe, expect, it } from "vitest";
import { SEED_CHUNK_BYTES, SEED_CHUNK_URLS, seedChunks } from "./submit-batch.ts";

describe("seed chunks", () => {
  it("keeps every URL, in order, with its index, under both bounds", () => {
    const urls = Array.from({ length: 5000 }, (_, i) => `https://s.test/p?i=${i}`);
    const chunks = seedChunks(urls);
    expect(chunks.flatMap((c) => c.urls)).toEqual(urls);
    for (const c of chunks) {
      expect(c.urls.length).toBeLessThanOrEqual(SEED_CHUNK_URLS);
      expect(urls[c.first]).toBe(c.urls[0]);
    }
    expect(chunks).toHaveLength(3);
  });
  it("splits long URLs by bytes; one over the bound is a chunk alone", () => {
    const long = "https://s.test/" + "a".repeat(8000);
    const chunks = seedChunks(Array.from({ length: 100 }, () => long));
    for (const c of chunks) expect(c.urls.join("").length).toBeLessThanOrEqual(SEED_CHUNK_BYTES);
    expect(chunks.length).toBeGreaterThan(3);
    expect(seedChunks(["https://s.test/" + "b".repeat(SEED_CHUNK_BYTES), "https://s.test/c"]).map((c) => c.urls.length)).toEqual([1, 1]);
  });
});
