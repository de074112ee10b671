import { describe, expect, it } from "vitest";
import { PartitionCache } from "./partition-cache.ts";

describe("PartitionCache", () => {
  it("keeps the entries of the partitions still owned after a rebalance, drops the others", () => {
    const c = new PartitionCache<number>();
    c.set("a", 0, 1);
    c.set("b", 1, 2);
    c.set("c", 2, 3);
    expect(c.retain([0, 2])).toBe(1);
    expect([...c]).toEqual([["a", 1], ["c", 3]]);
    expect(c.get("b")).toBeUndefined();
    expect(c.retain([])).toBe(2);
    expect(c.size).toBe(0);
  });
});
