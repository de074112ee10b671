import { describe, expect, it } from "vitest";
import { adapt, changeLogger, LoadGuard, LOG_QUIET_MS, type LoadChange, type LoadLimits, type LoadSample, type LoadState } from "./load-guard.ts";

const at = (cpu: number, own: number, ram = 0.3): LoadSample => ({ cpu, own, ram });
const AUTO: LoadLimits = { floor: 2, ceiling: 16, maxCpu: null, maxRam: 0.8 };
const FULL: LoadState = { limit: 16, reason: "none" };
/** The limits one sample repeated `n` times leads to. */
const run = (s: LoadSample, n: number, l = AUTO, from = FULL): LoadState[] => {
  const out: LoadState[] = [];
  let state = from;
  for (let i = 0; i < n; i++) out.push((state = adapt(state, s, l)));
  return out;
};

describe("adapt, MAX_CPU not set: others' load counts, not Trawl's own", () => {
  it("Trawl alone keeps every page, both cores busy with its own work (its servers and Chromium included)", () => {
    expect(run(at(1, 0.93), 5)).toEqual(Array(5).fill(FULL));
    expect(run(at(0.85, 0.1), 5)).toEqual(Array(5).fill(FULL)); // others busy, cores to spare
  });

  it("a hog on every core: Trawl keeps the stage's concurrency and its share (the old guard stopped here)", () => {
    // the hog has most of the machine, Trawl gets what the kernel gives it: below its fair share, so no lowering
    expect(run(at(1, 0.3), 5)).toEqual(Array(5).fill(FULL));
    expect(run(at(1, 0.02), 5)).toEqual(Array(5).fill(FULL));
    // a neighbour that takes half the cores leaves Trawl the other half
    expect(run(at(1, 0.5), 5)).toEqual(Array(5).fill(FULL));
  });

  it("Trawl over its share of a busy machine lowers its limit in proportion, never below the floor", () => {
    // others squeezed to 20 %: Trawl is entitled to 70 % (90 % busy minus theirs), uses 80 %: 16 x 0.7 / 0.8 = 14
    expect(adapt(FULL, at(1, 0.8), AUTO)).toEqual({ limit: 14, reason: "neighbours" });
    const steps = run(at(1, 0.85), 40);
    expect(steps.map((s) => s.limit)).toEqual([...steps.map((s) => s.limit)].sort((a, b) => b - a)); // only down
    expect(steps.at(-1)).toEqual({ limit: 2, reason: "neighbours" });
    expect(Math.min(...steps.map((s) => s.limit))).toBe(2);
    // a floor above the ceiling is the ceiling
    expect(run(at(1, 0.85), 10, { ...AUTO, floor: 50, ceiling: 4 }, { limit: 4, reason: "none" }).at(-1)).toEqual({ limit: 4, reason: "none" });
  });

  it("the load gone, the limit grows back to the stage's concurrency within a few intervals", () => {
    const low: LoadState = { limit: 2, reason: "neighbours" };
    expect(run(at(0.4, 0.3), 4, AUTO, low)).toEqual([
      { limit: 4, reason: "neighbours" }, { limit: 8, reason: "neighbours" }, { limit: 16, reason: "none" }, FULL,
    ]);
    // within its share on a busy machine: grows too, in proportion to the room left (at least one page)
    expect(adapt({ limit: 8, reason: "neighbours" }, at(1, 0.4), AUTO)).toEqual({ limit: 10, reason: "neighbours" });
  });
});

describe("adapt, MAX_CPU set: the spec's threshold on the whole machine's use", () => {
  const SET: LoadLimits = { ...AUTO, maxCpu: 0.8 };
  it("above it the limit falls in proportion down to the floor, whoever uses the CPU", () => {
    expect(adapt(FULL, at(1, 1), SET)).toEqual({ limit: 12, reason: "max_cpu" }); // 16 x 0.8
    expect(run(at(0.95, 0.05), 20, SET).at(-1)).toEqual({ limit: 2, reason: "max_cpu" });
    expect(adapt(FULL, at(0.7, 0.7), SET)).toEqual(FULL);
  });
  it("with a floor of 0 it holds every new page (the spec's reading), and comes back below it", () => {
    const held = run(at(0.95, 0.05), 30, { ...SET, floor: 0 }).at(-1)!;
    expect(held).toEqual({ limit: 0, reason: "max_cpu" });
    expect(run(at(0.5, 0.05), 6, { ...SET, floor: 0 }, held).map((s) => s.limit)).toEqual([1, 2, 4, 8, 16, 16]);
  });
});

describe("adapt, memory over MAX_RAM", () => {
  it("holds every new page whatever the floor, then starts again from the floor", () => {
    const held = adapt(FULL, at(0.2, 0.1, 0.9), AUTO);
    expect(held).toEqual({ limit: 0, reason: "memory" });
    expect(adapt(held, at(0.2, 0.1, 0.5), AUTO)).toEqual({ limit: 2, reason: "memory" });
    expect(run(at(0.2, 0.1, 0.5), 4, AUTO, held).at(-1)).toEqual(FULL);
  });
});

describe("LoadGuard", () => {
  const tick = () => new Promise((r) => setTimeout(r, 5));

  it("runs at most the limit of pages at once; a page ended lets the next one in", async () => {
    const guard = new LoadGuard({ limits: { ...AUTO, ceiling: 3 }, sample: () => at(0.2, 0.1), intervalMs: 60_000 });
    const releases: (() => void)[] = [];
    const started: number[] = [];
    const pages = Array.from({ length: 5 }, (_, i) => guard.admit().then((release) => { started.push(i); releases.push(release); }));
    await tick();
    expect(started).toEqual([0, 1, 2]);
    releases[0]!();
    releases[0]!(); // a second call does nothing
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    expect(guard.current()).toEqual({ limit: 3, reason: "none", running: 3 });
    releases[1]!();
    await Promise.all(pages);
    expect(started).toEqual([0, 1, 2, 3, 4]);
  });

  it("backs off when overloaded: with MAX_CPU set and a floor of 0 no page starts above it, and they do once it drops", async () => {
    let load = 0.95;
    const changes: LoadChange[] = [];
    const guard = new LoadGuard({ limits: { floor: 0, ceiling: 4, maxCpu: 0.8, maxRam: 0.8 }, sample: () => at(load, 0.05), intervalMs: 1, onChange: (c) => changes.push(c) });
    // the limit falls 4 -> 3 -> 2 -> 1 -> 0 over the first samples; pages admitted meanwhile are let go at once
    for (let i = 0; i < 10; i++) {
      (await guard.admit(AbortSignal.timeout(20)))();
      await tick();
    }
    expect(guard.current().limit).toBe(0);
    let through = 0;
    const waiting = Array.from({ length: 50 }, () => guard.admit().then((release) => { through++; release(); }));
    await new Promise((r) => setTimeout(r, 50));
    expect(through).toBe(0);
    load = 0.1;
    await Promise.all(waiting); // the guard samples while pages wait: no page has to end for the limit to grow
    expect(through).toBe(50);
    for (let i = 0; i < 10; i++) {
      (await guard.admit())();
      await tick();
    }
    expect(guard.current()).toEqual({ limit: 4, reason: "none", running: 0 });
    // the log's view: one change of reason into max_cpu however many pages waited, one out of it
    const reasons = changes.filter((c) => c.reason !== c.previous.reason).map((c) => c.reason);
    expect(reasons).toEqual(["max_cpu", "none"]);
  });

  it("a floor keeps pages moving under any CPU load (the old guard let one through per interval)", async () => {
    const guard = new LoadGuard({ limits: { floor: 2, ceiling: 16, maxCpu: 0.5, maxRam: 0.8 }, sample: () => at(1, 0.05), intervalMs: 1 });
    let done = 0;
    await Promise.all(Array.from({ length: 200 }, () => guard.admit().then(async (release) => { await tick(); done++; release(); })));
    expect(done).toBe(200);
    expect(guard.current()).toMatchObject({ limit: 2, reason: "max_cpu" });
  });

  it("an aborted wait resolves without a slot", async () => {
    const guard = new LoadGuard({ limits: { floor: 0, ceiling: 1, maxCpu: null, maxRam: 0.8 }, sample: () => at(0.1, 0.1, 0.95), intervalMs: 60_000 });
    const stop = new AbortController();
    const held = guard.admit(stop.signal);
    await tick();
    stop.abort();
    (await held)();
    expect(guard.current()).toEqual({ limit: 0, reason: "memory", running: 0 });
  });
});

describe("changeLogger: the reason in the log once per change, not at every flap", () => {
  it("warns on a new reason, says the return once, and keeps a flapping guard at debug", () => {
    let now = 0;
    const level = changeLogger(() => now);
    const change = (from: LoadState, to: LoadState): LoadChange => ({ ...to, previous: from, sample: at(1, 0.8) });
    const down = change(FULL, { limit: 15, reason: "neighbours" });
    const up = change({ limit: 15, reason: "neighbours" }, FULL);
    expect(level(down)).toBe("warn");
    expect(level(change({ limit: 15, reason: "neighbours" }, { limit: 13, reason: "neighbours" }))).toBe("debug"); // a step
    expect(level(up)).toBe("info");
    // at the edge: 16 -> 15 -> 16 every few seconds for a minute
    const flaps: string[] = [];
    for (now = 2000; now < LOG_QUIET_MS; now += 2000) flaps.push(level(down), level(up));
    expect(new Set(flaps)).toEqual(new Set(["debug"]));
    // a minute after the last warning it is news again; memory is another reason
    now = LOG_QUIET_MS + 1;
    expect(level(down)).toBe("warn");
    expect(level(change(FULL, { limit: 0, reason: "memory" }))).toBe("warn");
  });
});
