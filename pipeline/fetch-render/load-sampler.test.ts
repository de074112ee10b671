import { spawn, type ChildProcess } from "node:child_process";
import { cpus } from "node:os";
import { Worker } from "node:worker_threads";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../runtime/config.ts";
import { LoadGuard } from "./load-guard.ts";
import { systemSampler } from "./load-sampler.ts";

const SPIN = (ms: number) => `const end = Date.now() + ${ms}; while (Date.now() < end);`;

describe("systemSampler", () => {
  it("samples the machine", () => {
    const s = systemSampler()();
    expect(s.ram).toBeGreaterThan(0);
    expect(s.ram).toBeLessThan(1);
    expect(s.cpu).toBeGreaterThanOrEqual(0);
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

  it("adds the CPU of Trawl's own servers to its own share", () => {
    let serverS = 0;
    const sample = systemSampler(null, undefined, () => serverS);
    serverS = 0.5; // half a CPU second since the previous sample
    const s = sample();
    expect(s.servers).toBeGreaterThan(0);
    expect(s.own).toBeGreaterThanOrEqual(s.servers!);
  });
});

// Real load on this machine's cores, through the real sampler and the default settings (MAX_CPU not set).
describe("LoadGuard on real load: a CPU hog on every core beside Trawl", () => {
  const defaults = loadConfig({});
  let hog: ChildProcess | undefined;
  afterEach(() => void hog?.kill("SIGKILL"));
  const startHog = async () => {
    // one child process, a thread spinning per core (its main thread and workers)
    const workers = `for (let i = 1; i < ${cpus().length}; i++) new Worker(${JSON.stringify(SPIN(6000))}, { eval: true });`;
    const code = `const { Worker } = require("node:worker_threads"); ${workers} console.log("spinning"); ${SPIN(6000)}`;
    hog = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    await new Promise((resolve) => hog!.stdout!.once("data", resolve));
    await new Promise((r) => setTimeout(r, 500));
  };
  const guard = (maxCpu: number | null) => new LoadGuard({ limits: { floor: defaults.loadGuardMinConcurrency, ceiling: 16, maxCpu, maxRam: 1 }, sample: systemSampler(null), intervalMs: 100 });
  const settle = async (g: LoadGuard) => {
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 150));
      (await g.admit())();
    }
    return g.current();
  };

  it("MAX_CPU not set: the hog does not take Trawl's share, every page slot stays open", async () => {
    await startHog();
    expect(await settle(guard(defaults.maxCpu))).toEqual({ limit: 16, reason: "none", running: 0 });
  });

  it("MAX_CPU set below the machine's use: backs off to the floor, never below", async () => {
    await startHog();
    expect(await settle(guard(0.5))).toEqual({ limit: defaults.loadGuardMinConcurrency, reason: "max_cpu", running: 0 });
  });
});
