import { spawn } from "node:child_process";
import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../runtime/config.ts";
import { cpuOverloaded, LoadGuard, systemSampler, type LoadSample } from "./load-guard.ts";

const SPIN = (ms: number) => `const end = Date.now() + ${ms}; while (Date.now() < end);`;

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

  it("MAX_CPU not set: a CPU overload that lasts lets one page through per interval (a trickle, not a stop)", async () => {
    const guard = new LoadGuard({ maxCpu: null, maxRam: 0.8, sample: () => ({ cpu: 1, own: 0.05, ram: 0.2 }), intervalMs: 100 });
    const admitted: number[] = [];
    const t0 = Date.now();
    const waiting = Array.from({ length: 4 }, () => guard.admit().then(() => admitted.push(Date.now() - t0)));
    await Promise.race([Promise.all(waiting), new Promise((r) => setTimeout(r, 450))]);
    expect(admitted.length).toBeGreaterThanOrEqual(2);
    expect(admitted.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < admitted.length; i++) expect(admitted[i]! - admitted[i - 1]!).toBeGreaterThanOrEqual(90);
    await Promise.all(waiting);
    // memory full, or MAX_CPU set: nothing through while it lasts
    for (const g of [new LoadGuard({ maxCpu: null, maxRam: 0.8, sample: () => ({ cpu: 1, own: 0.05, ram: 0.9 }), intervalMs: 50 }), new LoadGuard({ maxCpu: 0.8, maxRam: 0.8, sample: () => ({ cpu: 1, own: 0.05, ram: 0.2 }), intervalMs: 50 })]) {
      let through = false;
      const stop = new AbortController();
      const held = g.admit(stop.signal).then(() => (through = !stop.signal.aborted));
      await new Promise((r) => setTimeout(r, 200));
      stop.abort();
      await held;
      expect(through).toBe(false);
    }
  });

  it("MAX_CPU not set: overload is a busy machine used more by others than by this process", () => {
    const at = (cpu: number, own: number): LoadSample => ({ cpu, own, ram: 0.1 });
    expect(cpuOverloaded(at(1, 0.9), null)).toBe(false); // Trawl alone, both cores busy with its own work
    expect(cpuOverloaded(at(0.85, 0.1), null)).toBe(false); // others busy, cores to spare
    expect(cpuOverloaded(at(1, 0.35), null)).toBe(true); // a hog beside Trawl
    expect(cpuOverloaded(at(1, 0.02), null)).toBe(true); // the hog still there once Trawl held back
    // MAX_CPU set: the whole machine's (or cgroup's) use, whoever uses it, as before
    expect(cpuOverloaded(at(0.9, 0.9), 0.8)).toBe(true);
    expect(cpuOverloaded(at(0.7, 0), 0.8)).toBe(false);
  });
});

// Real load on this machine's cores, through the real sampler and the default settings (MAX_CPU not set).
describe("LoadGuard with the defaults, on real load", () => {
  const defaults = loadConfig({});
  // memory is not what these tests are about: a full machine would hold both cases for another reason
  const guard = () => new LoadGuard({ maxCpu: defaults.maxCpu, maxRam: 1, sample: systemSampler(null), intervalMs: 0 });

  it("holds new pages while a CPU hog beside Trawl spins on both cores", async () => {
    // one child process, two threads spinning (its main thread and a worker)
    const code = `const { Worker } = require("node:worker_threads"); new Worker(${JSON.stringify(SPIN(4000))}, { eval: true }); console.log("spinning"); ${SPIN(4000)}`;
    const hog = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise((resolve) => hog.stdout.once("data", resolve));
      const g = guard();
      await new Promise((r) => setTimeout(r, 1000));
      expect(g.overloaded()).toBe(true);
    } finally {
      hog.kill("SIGKILL");
    }
  });

  it("stays open while only this process keeps the cores busy", () => {
    // what a machine running Trawl alone shows: both cores busy, nearly all of it Trawl's own threads. (This test
    // cannot spin the real cores for it: the machine it runs on is shared, and other work there is overload.)
    const g = new LoadGuard({ maxCpu: defaults.maxCpu, maxRam: 1, sample: () => ({ cpu: 0.98, own: 0.93, ram: 0.3 }), intervalMs: 0 });
    expect(g.overloaded()).toBe(false);
  });

  it("counts this process's worker threads as its own CPU", async () => {
    const sample = systemSampler(null);
    const before = process.cpuUsage();
    const t0 = performance.now();
    const workers = Array.from({ length: 2 }, () => new Worker(SPIN(300), { eval: true }));
    await Promise.all(workers.map((w) => new Promise((r) => w.once("exit", r))));
    const s = sample();
    const used = process.cpuUsage(before);
    // the workers' spinning is in `own` (a share of every core over the interval), not left to `cpu - own`
    const expected = (used.user + used.system) / ((performance.now() - t0) * 1000 * cpus().length);
    expect(s.own).toBeGreaterThanOrEqual(expected * 0.9);
    expect(used.user + used.system).toBeGreaterThan(100_000); // the workers did spin (0.1 s of CPU at least)
  });
});
