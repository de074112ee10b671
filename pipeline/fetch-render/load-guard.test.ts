import { describe, expect, it } from "vitest";
import { LoadGuard, systemSampler } from "./load-guard.ts";

describe("LoadGuard", () => {
  it("admits at once below the thresholds and waits above them", async () => {
    const samples = [{ cpu: 0.95, ram: 0.2 }, { cpu: 0.5, ram: 0.9 }, { cpu: 0.3, ram: 0.3 }];
    let i = 0;
    const overloads: number[] = [];
    const guard = new LoadGuard({ maxCpu: 0.8, maxRam: 0.8, sample: () => samples[Math.min(i++, samples.length - 1)]!, intervalMs: 5, onOverload: (s) => overloads.push(s.cpu) });
    const t0 = Date.now();
    await guard.admit();
    expect(i).toBe(3); // waited through two overloaded samples
    expect(overloads).toEqual([0.95]);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(8);
    expect(guard.overloaded()).toBe(false);
  });
  it("reports an overload once, however many workers wait, and a later one again", async () => {
    let load = 0.95;
    const overloads: number[] = [];
    const guard = new LoadGuard({ maxCpu: 0.8, maxRam: 0.8, sample: () => ({ cpu: load, ram: 0.1 }), intervalMs: 0, onOverload: (s) => overloads.push(s.cpu) });
    const waiting = Array.from({ length: 50 }, () => guard.admit());
    await new Promise((r) => setTimeout(r, 20));
    load = 0.1;
    await Promise.all(waiting);
    expect(overloads).toEqual([0.95]);
    load = 0.85;
    const next = guard.admit();
    await new Promise((r) => setTimeout(r, 10));
    load = 0.1;
    await next;
    expect(overloads).toEqual([0.95, 0.85]);
  });
  it("samples the machine", () => {
    const s = systemSampler()();
    expect(s.ram).toBeGreaterThan(0);
    expect(s.ram).toBeLessThan(1);
    expect(s.cpu).toBeGreaterThanOrEqual(0);
  });
});
