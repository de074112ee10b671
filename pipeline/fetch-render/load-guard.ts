// MAX_CPU / MAX_RAM: above either threshold a worker starts no new page until the load drops again. The load is
// the process's cgroup's share when the cgroup sets a limit (a container), else the whole machine's.
// MAX_CPU not set: the guard holds on overload, not on work. A crawl on its own keeps the cores busy (two cores at
// 80 % are Trawl converting pages, not a machine in trouble), so the CPU counts as overloaded only while it is at
// least AUTO_BUSY busy and the rest of the machine (the CPU time not used by this process) uses more of it than this
// process does: a hog beside Trawl gets the cores back, Trawl alone runs as fast as it can.
import { cpus, freemem, totalmem } from "node:os";
import { sleep } from "../runtime/retry.ts";
import { readCgroup, type Cgroup } from "./cgroup.ts";

export interface LoadSample {
  /** fraction of the machine's CPU time in use since the previous sample */
  cpu: number;
  /** the part of `cpu` used by this process (every thread: main, workers, V8's) */
  own?: number;
  /** fraction of the machine's memory in use */
  ram: number;
}

/** Where the load is read from (for the start log and the promise of docs/api.md). */
export function loadSource(cgroup: Cgroup | null): { cpu: "cgroup" | "machine"; ram: "cgroup" | "machine" } {
  const ramLimited = cgroup?.memoryLimitBytes != null && cgroup.memoryLimitBytes < totalmem();
  return { cpu: cgroup?.cpuLimitCores != null ? "cgroup" : "machine", ram: ramLimited ? "cgroup" : "machine" };
}

/**
 * Samples the load: CPU as the cgroup's usage over its quota and memory as its usage over its limit when the
 * process's cgroup sets them, else the whole machine's (like the anchor's self-hosted workers).
 */
export function systemSampler(cgroup: Cgroup | null = readCgroup(), now = () => performance.now()): () => LoadSample {
  const source = loadSource(cgroup);
  let last = snapshot();
  let lastUs = cgroup?.cpuUsageUs() ?? null;
  let lastAt = now();
  let lastOwn = process.cpuUsage();
  return () => {
    const ownUsage = process.cpuUsage(lastOwn);
    lastOwn = process.cpuUsage();
    const elapsedUs = (now() - lastAt) * 1000;
    const cores = source.cpu === "cgroup" && cgroup ? (cgroup.cpuLimitCores as number) : cpus().length;
    const own = elapsedUs > 0 ? (ownUsage.user + ownUsage.system) / (elapsedUs * cores) : 0;
    const machine = snapshot();
    const busy = machine.busy - last.busy;
    const total = machine.total - last.total;
    last = machine;
    let cpu = total > 0 ? busy / total : 0;
    const at = now();
    if (source.cpu === "cgroup" && cgroup) {
      const us = cgroup.cpuUsageUs();
      const wallUs = (at - lastAt) * 1000;
      if (us !== null && lastUs !== null && wallUs > 0) cpu = (us - lastUs) / (wallUs * (cgroup.cpuLimitCores as number));
      lastUs = us;
    }
    lastAt = at;
    let ram = 1 - freemem() / totalmem();
    const used = source.ram === "cgroup" ? cgroup?.memoryUsageBytes() : null;
    if (used != null && cgroup?.memoryLimitBytes) ram = used / cgroup.memoryLimitBytes;
    return { cpu: Math.max(0, cpu), own: Math.max(0, own), ram: Math.max(0, ram) };
  };
}

function snapshot(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    busy += t.user + t.nice + t.sys + t.irq;
    total += t.user + t.nice + t.sys + t.irq + t.idle;
  }
  return { busy, total };
}

/** MAX_CPU not set: the machine counts as busy from here on, and as overloaded if others use more of it than we do */
export const AUTO_BUSY = 0.9;

/** Whether a sample is over the CPU threshold: MAX_CPU when set, else overload (see the head of this file). */
export function cpuOverloaded(s: LoadSample, maxCpu: number | null): boolean {
  if (maxCpu !== null) return s.cpu > maxCpu;
  const own = Math.min(s.own ?? 0, s.cpu);
  return s.cpu >= AUTO_BUSY && s.cpu - own > own;
}

export class LoadGuard {
  private readonly maxCpu: number | null;
  private readonly maxRam: number;
  private readonly sample: () => LoadSample;
  private readonly intervalMs: number;
  private current: LoadSample = { cpu: 0, ram: 0 };
  private sampledAt = 0;
  private readonly onOverload: (s: LoadSample) => void;
  /** An overload is reported once per episode, not once per waiting worker. */
  private reported = false;
  /** when the last page was let through an overload (MAX_CPU not set) */
  private trickledAt = 0;

  constructor(opts: { maxCpu: number | null; maxRam: number; sample: () => LoadSample; intervalMs?: number; onOverload?: (s: LoadSample) => void }) {
    this.maxCpu = opts.maxCpu;
    this.maxRam = opts.maxRam;
    this.sample = opts.sample;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.onOverload = opts.onOverload ?? (() => {});
  }

  private read(): LoadSample {
    const now = Date.now();
    if (now - this.sampledAt >= this.intervalMs) {
      this.current = this.sample();
      this.sampledAt = now;
    }
    return this.current;
  }

  overloaded(): boolean {
    const s = this.read();
    const over = cpuOverloaded(s, this.maxCpu) || s.ram > this.maxRam;
    if (!over) this.reported = false;
    return over;
  }

  /**
   * Resolves once the machine is below both thresholds (at once when it already is). With MAX_CPU not set, a CPU
   * overload lets one page through per interval: a machine that other work keeps busy for hours slows a crawl to a
   * trickle instead of stopping it (a crawl that never ends and never fails). A set MAX_CPU, and memory, hold all.
   */
  async admit(signal?: AbortSignal): Promise<void> {
    while (this.overloaded() && !signal?.aborted) {
      if (!this.reported) this.onOverload(this.current);
      this.reported = true;
      const now = Date.now();
      if (this.maxCpu === null && this.current.ram <= this.maxRam && now - this.trickledAt >= this.intervalMs) {
        this.trickledAt = now;
        return;
      }
      await sleep(this.intervalMs, signal);
    }
  }
}
