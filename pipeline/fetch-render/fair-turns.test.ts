import { describe, expect, it } from "vitest";
import { FairTurns } from "./fair-turns.ts";

const drain = (q: FairTurns<string>, ready?: (item: string, group: string) => boolean): string[] => {
  const out: string[] = [];
  for (let x = q.take(ready); x !== undefined; x = q.take(ready)) out.push(x);
  return out;
};

describe("FairTurns", () => {
  it("groups take turns, round robin; each group's items in arrival order", () => {
    const q = new FairTurns<string>();
    for (let i = 1; i <= 5; i++) q.push("big", `big${i}`);
    q.push("small", "small1");
    q.push("small", "small2");
    q.push("other", "other1");
    expect(q.size).toBe(8);
    expect(drain(q)).toEqual(["big1", "small1", "other1", "big2", "small2", "big3", "big4", "big5"]);
    expect(q.size).toBe(0);
  });

  it("a group that arrives later gets the next turn, not a place behind the whole backlog of another", () => {
    const q = new FairTurns<string>();
    for (let i = 1; i <= 100; i++) q.push("big", `big${i}`);
    expect(q.take()).toBe("big1");
    q.push("late", "late1");
    expect(q.take()).toBe("big2"); // "big" went to the back of the turns, but it is alone before "late" came
    expect(q.take()).toBe("late1");
  });

  it("a group whose first item is not ready keeps its place; the next group goes", () => {
    const q = new FairTurns<string>();
    q.push("a", "a1");
    q.push("a", "a2");
    q.push("b", "b1");
    q.push("b", "b2");
    const full = new Set(["a"]); // crawl a's own gate is full
    expect(q.take((_, g) => !full.has(g))).toBe("b1");
    expect(q.take((_, g) => !full.has(g))).toBe("b2");
    expect(q.take((_, g) => !full.has(g))).toBeUndefined();
    expect(q.size).toBe(2);
    full.clear();
    expect(drain(q)).toEqual(["a1", "a2"]);
  });

  it("no group starves: over any run of turns each waiting group gets one in every round", () => {
    const q = new FairTurns<string>();
    const sizes: Record<string, number> = { c1: 400, c2: 3, c3: 50, c4: 1, c5: 20 };
    for (const [g, n] of Object.entries(sizes)) for (let i = 0; i < n; i++) q.push(g, g);
    const order = drain(q);
    // each group is done once it had as many turns as it had items, and never more than one turn ahead of another
    // group still waiting
    const got: Record<string, number> = {};
    for (const g of order) {
      got[g] = (got[g] ?? 0) + 1;
      const waitingOthers = Object.keys(sizes).filter((o) => o !== g && (got[o] ?? 0) < (sizes[o] as number));
      for (const o of waitingOthers) expect((got[g] as number) - (got[o] ?? 0)).toBeLessThanOrEqual(1);
    }
    expect(got).toEqual(sizes);
    expect(order.indexOf("c4")).toBeLessThan(5);
  });

  it("remove: a waiter that gave up leaves its group's queue; an emptied group leaves the turns", () => {
    const q = new FairTurns<string>();
    q.push("a", "a1");
    q.push("b", "b1");
    q.push("a", "a2");
    expect(q.remove("a1")).toBe(true);
    expect(q.remove("a1")).toBe(false);
    expect([...q.heads()]).toEqual(["a2", "b1"]);
    expect(q.remove("b1")).toBe(true);
    expect([...q.heads()]).toEqual(["a2"]);
    expect(q.size).toBe(1);
  });
});
