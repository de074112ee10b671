import { describe, expect, it } from "vitest";
import { StatusCache } from "./status-cache.ts";

describe("StatusCache", () => {
  it("readers within the TTL share one load (also while it runs); after the TTL the next reader loads again", async () => {
    let t = 0;
    let loads = 0;
    const c = new StatusCache(250, () => t);
    const load = async () => `body ${++loads}`;
    const [a, b] = await Promise.all([c.get("j", "k", load), c.get("j", "k", load)]);
    expect([a, b, loads]).toEqual(["body 1", "body 1", 1]);
    t = 249;
    expect(await c.get("j", "k", load)).toBe("body 1");
    // past the TTL: the stale answer at once, one fresh read in the background, which the next readers get
    t = 250;
    const [stale, alsoStale] = await Promise.all([c.get("j", "k", load), c.get("j", "k", load)]);
    expect([stale, alsoStale]).toEqual(["body 1", "body 1"]);
    await new Promise((r) => setTimeout(r, 0));
    expect(loads).toBe(2); // one background read for both
    expect(await c.get("j", "k", load)).toBe("body 2");
    expect(await c.get("j", "other page", load)).toBe("body 3");
  });

  it("a job's answers are dropped at once when it is invalidated; other jobs keep theirs", async () => {
    let loads = 0;
    const c = new StatusCache(10_000, () => 0);
    const load = async () => `body ${++loads}`;
    await c.get("j", "k1", load);
    await c.get("j", "k2", load);
    await c.get("other", "k3", load);
    c.invalidate("j");
    expect(await c.get("j", "k1", load)).toBe("body 4");
    expect(await c.get("other", "k3", load)).toBe("body 3");
  });

  it("a failed background read drops the stale answer: the next reader reads (and sees the error) itself", async () => {
    let t = 0;
    let fail = false;
    const c = new StatusCache(100, () => t);
    const load = async () => {
      if (fail) throw new Error("Job expired");
      return "ok";
    };
    expect(await c.get("j", "k", load)).toBe("ok");
    fail = true;
    t = 200;
    expect(await c.get("j", "k", load)).toBe("ok");
    await new Promise((r) => setTimeout(r, 0));
    await expect(c.get("j", "k", load)).rejects.toThrow("Job expired");
  });

  it("a failed load is shared by the readers waiting on it but not kept", async () => {
    let loads = 0;
    const c = new StatusCache(10_000, () => 0);
    const failing = async () => {
      loads++;
      throw new Error("Job not found");
    };
    const results = await Promise.allSettled([c.get("j", "k", failing), c.get("j", "k", failing)]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(loads).toBe(1);
    await new Promise((r) => setTimeout(r, 0));
    expect(c.size).toBe(0);
    expect(await c.get("j", "k", async () => "found")).toBe("found");
  });

  it("TTL 0 turns it off; it never holds more than maxEntries answers (the oldest go first)", async () => {
    let loads = 0;
    const off = new StatusCache(0, () => 0);
    await off.get("j", "k", async () => `${++loads}`);
    await off.get("j", "k", async () => `${++loads}`);
    expect(loads).toBe(2);
    const small = new StatusCache(10_000, () => 0, 2);
    for (const k of ["a", "b", "c"]) await small.get("j", k, async () => k);
    expect(small.size).toBe(2);
    expect(await small.get("j", "a", async () => "a again")).toBe("a again");
    expect(await small.get("j", "c", async () => "c again")).toBe("c");
  });
});
