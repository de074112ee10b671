// What the load guard measures: the CPU share in use (the process's cgroup's, over its quota, when the cgroup sets
// one; else the whole machine's), the part of it that is Trawl's own (this process, every thread, and Trawl's own
// servers on this machine: its Chromium, its Kafka, ClickHouse and registry, see own-servers.ts), and memory.
import { cpus, freemem, totalmem } from "node:os";
import { readCgroup, type Cgroup } from "./cgroup.ts";

export interface LoadSample {
  /** fraction of the machine's CPU time in use since the previous sample */
  cpu: number;
  /** the part of `cpu` that is Trawl's: this process (every thread: main, workers, V8's) and its own servers */
  own?: number;
  /** the part of `own` used by Trawl's own servers (Chromium, and Kafka / ClickHouse / registry on this machine) */
  servers?: number;
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
 * process's cgroup sets them, else the whole machine's (like the anchor's self-hosted workers). `servers`: CPU seconds
 * Trawl's own other processes used since its previous call (OwnServers.cpuSecondsSince).
 */
export function systemSampler(cgroup: Cgroup | null = readCgroup(), now = () => performance.now(), servers: () => number = () => 0): () => LoadSample {
  const source = loadSource(cgroup);
  let last = snapshot();
  let lastUs = cgroup?.cpuUsageUs() ?? null;
  let lastAt = now();
  let lastOwn = process.cpuUsage();
  servers(); // the baseline
  return () => {
    const ownUsage = process.cpuUsage(lastOwn);
    lastOwn = process.cpuUsage();
    const serverUs = servers() * 1e6;
    const elapsedUs = (now() - lastAt) * 1000;
    const cores = source.cpu === "cgroup" && cgroup ? (cgroup.cpuLimitCores as number) : cpus().length;
    const share = (us: number) => (elapsedUs > 0 ? us / (elapsedUs * cores) : 0);
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
    const own = share(ownUsage.user + ownUsage.system + serverUs);
    return { cpu: Math.max(0, cpu), own: Math.max(0, own), servers: Math.max(0, share(serverUs)), ram: Math.max(0, ram) };
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
