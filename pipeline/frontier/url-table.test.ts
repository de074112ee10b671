import { describe, expect, it } from "vitest";
import { MAX_DEPTH, UrlTable } from "./url-table.ts";

const key = (i: number) => `https://h${i % 1000}.test/p/${i}`;

describe("UrlTable (the frontier's seen URLs)", () => {
  it("keeps each key's packed state and depth, and only the keys it was given", () => {
    const t = new UrlTable();
    for (let i = 0; i < 50_000; i++) t.set(key(i), (i % 300 << 2) | (i & 3));
    expect(t.size).toBe(50_000);
    for (let i = 0; i < 50_000; i++) expect(t.get(key(i))).toBe((i % 300 << 2) | (i & 3));
    for (let i = 50_000; i < 60_000; i++) expect(t.has(key(i))).toBe(false);
  });

  it("a key set again changes its state without counting twice", () => {
    const t = new UrlTable();
    expect(t.set("a", 0)).toBeUndefined();
    expect(t.set("a", (7 << 2) | 1)).toBe(0);
    expect(t.size).toBe(1);
    expect(t.get("a")).toBe((7 << 2) | 1);
  });

  it("keeps depths up to MAX_DEPTH", () => {
    const t = new UrlTable();
    t.set("deep", (MAX_DEPTH << 2) | 3);
    t.set("deeper", ((MAX_DEPTH + 5000) << 2) | 2);
    expect(t.get("deep")).toBe((MAX_DEPTH << 2) | 3);
    expect(t.get("deeper")).toBe((MAX_DEPTH << 2) | 2);
  });

  it("costs at most 16 bytes per URL at every size past its first slots", () => {
    const t = new UrlTable();
    let worst = 0;
    for (let i = 0; i < 300_000; i++) {
      t.set(key(i), 0);
      if (i >= 64) worst = Math.max(worst, t.bytes / t.size);
    }
    expect(worst).toBeLessThanOrEqual(16);
    const restored = new UrlTable(UrlTable.slotsFor(300_000));
    for (let i = 0; i < 300_000; i++) restored.set(key(i), 1);
    expect(restored.bytes / restored.size).toBeLessThanOrEqual(16);
  });
});
