// Per-process figures from /proc: resident memory and CPU seconds (user + system) of a pid.
import { readdirSync, readFileSync } from "node:fs";

const TICKS = 100; // USER_HZ on Linux

export function rssMB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** Samples the peak RSS of some pids until stopped. */
export function peakRss(pids: Record<string, number>, everyMs = 200): { stop(): Record<string, number>; now(): Record<string, number> } {
  const peak: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, rssMB(pid));
  };
  sample();
  const t = setInterval(sample, everyMs);
  return {
    now: () => Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMB(pid)])),
    stop: () => {
      clearInterval(t);
      sample();
      return peak;
    },
  };
}

/** Every live descendant of a pid (the browser processes a Trawl process started). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      continue; // the process ended while we read
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Samples the peak summed RSS of a pid's descendants (MB) until stopped. */
export function peakTreeRss(pid: number, everyMs = 300): { stop(): number } {
  let peak = 0;
  const sample = () => {
    peak = Math.max(peak, descendants(pid).reduce((n, p) => n + rssMB(p), 0));
  };
  const t = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(t);
      sample();
      return peak;
    },
  };
}
