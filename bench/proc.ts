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

/** System (kernel) CPU seconds of a pid: syscalls, page faults, the file system. */
export function systemCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[12]) / TICKS;
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

/** Resident and proportional (shared pages divided among their users) set size of a pid, MB (0 when gone). */
function memoryOf(pid: number): { rss: number; pss: number } {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0);
    return { rss: kb("Rss") / 1024, pss: kb("Pss") / 1024 };
  } catch {
    return { rss: rssMB(pid), pss: 0 };
  }
}

const isRenderer = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--type=renderer");
  } catch {
    return false;
  }
};

/**
 * Memory of the browser processes a Trawl process started, measured from /proc: the peak of the whole tree (RSS and
 * PSS summed), the peak of the browser without its pages (main, GPU, network and utility processes), and per page the
 * peak of one renderer process (Chromium gives each page of its own context its own renderer process).
 */
export function peakBrowserMemory(pid: number, everyMs = 300): { stop(): Record<string, number> } {
  const peak = { treeRssMB: 0, treePssMB: 0, baseRssMB: 0, pageRssMB: 0, pagePssMB: 0, renderersAtOnce: 0 };
  let pageRssSum = 0;
  let pageSamples = 0;
  const sample = () => {
    let treeRss = 0;
    let treePss = 0;
    let base = 0;
    let renderers = 0;
    for (const p of descendants(pid)) {
      const m = memoryOf(p);
      treeRss += m.rss;
      treePss += m.pss;
      if (!isRenderer(p)) {
        base += m.rss;
        continue;
      }
      renderers++;
      pageRssSum += m.rss;
      pageSamples++;
      peak.pageRssMB = Math.max(peak.pageRssMB, m.rss);
      peak.pagePssMB = Math.max(peak.pagePssMB, m.pss);
    }
    peak.treeRssMB = Math.max(peak.treeRssMB, treeRss);
    peak.treePssMB = Math.max(peak.treePssMB, treePss);
    peak.baseRssMB = Math.max(peak.baseRssMB, base);
    peak.renderersAtOnce = Math.max(peak.renderersAtOnce, renderers);
  };
  const t = setInterval(sample, everyMs);
  return {
    stop: () => {
      clearInterval(t);
      sample();
      const round = (x: number) => Math.round(x);
      return {
        browserPeakRssMB: round(peak.treeRssMB), browserPeakPssMB: round(peak.treePssMB), browserBasePeakRssMB: round(peak.baseRssMB),
        pagePeakRssMB: round(peak.pageRssMB), pagePeakPssMB: round(peak.pagePssMB), pageMeanRssMB: pageSamples ? round(pageRssSum / pageSamples) : 0,
        renderersAtOnce: peak.renderersAtOnce,
      };
    },
  };
}

/** CPU seconds of each thread group of a pid, by thread name with its digits dropped ("C2 CompilerThre",
 * "data-plane-kafka-request-handler-", "BackgrProcPool"…): where a server's CPU goes without a profiler. */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[\d]+/g, "#").trim();
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out[name] = (out[name] ?? 0) + (Number(fields[11]) + Number(fields[12])) / TICKS;
    } catch {
      continue; // the thread ended while we read
    }
  }
  return out;
}
