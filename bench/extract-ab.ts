// A/B of the json-format crawl cost between two commits, interleaved in one run (the machine is shared and noisy):
// `node bench/extract-ab.ts <checkout of the base commit, with node_modules> [rounds]`. Each round crawls the
// PostgreSQL manual in embedded mode four times — base plain, this plain, base with a json format, this with a json
// format — and the output gives CPU ms/page (the whole process, worker threads included; and of its main thread, the
// event loop that every stage of the embedded process shares) and pages/s of each.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { e2e as current } from "./e2e.ts";

/** CPU seconds of a process's main thread (its task whose id is the pid), or undefined once it is gone. */
function mainThreadCpu(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined; // exited between the listing and the read
  }
}

/** The Trawl processes of the two checkouts (bin/trawl.js under this bench's or the base's folder). */
function trawlPids(roots: string[]): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).map(Number).filter((pid) => {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return roots.some((r) => cmd.includes(join(r, "bin", "trawl.js")));
    } catch {
      return false;
    }
  });
}

const baseDir = process.argv[2];
if (!baseDir) throw new Error("usage: node bench/extract-ab.ts <checkout of the base commit> [rounds]");
const rounds = Number(process.argv[3] ?? 3);
const { e2e: base } = (await import(join(resolve(baseDir), "bench", "e2e.ts"))) as { e2e: typeof current };
const TABLE = { type: "object", properties: { title: { type: "string" }, rows: { type: "array", items: { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } } } } };
const plain = { formats: ["markdown"] };
const json = { formats: ["markdown", { type: "json", schema: TABLE }] };

// the main thread's CPU, sampled while each crawl runs (the last sample before the process exits)
const roots = [resolve(import.meta.dirname, ".."), resolve(baseDir)];
const lastMainCpu = new Map<number, number>();
const sampler = setInterval(() => {
  for (const pid of trawlPids(roots)) {
    const cpu = mainThreadCpu(pid);
    if (cpu !== undefined) lastMainCpu.set(pid, cpu);
  }
}, 100);

type Result = { cpuMsPerPage: number[]; mainThreadCpuMsPerPage: number[]; pagesPerSecond: number[] };
const runs: Record<string, Result> = {};
async function crawl(name: string, e2e: typeof current, options: Record<string, unknown>): Promise<void> {
  const before = new Set(lastMainCpu.keys());
  const r = await e2e("embedded", "pg", options);
  const pid = [...lastMainCpu.keys()].find((p) => !before.has(p));
  const run = (runs[name] ??= { cpuMsPerPage: [], mainThreadCpuMsPerPage: [], pagesPerSecond: [] });
  run.cpuMsPerPage.push(+(r.cpuSecondsPerPage * 1000).toFixed(1));
  run.mainThreadCpuMsPerPage.push(pid === undefined ? NaN : +(((lastMainCpu.get(pid) ?? NaN) * 1000) / r.pages).toFixed(1));
  run.pagesPerSecond.push(r.pagesPerSecond);
}
for (let i = 0; i < rounds; i++) {
  await crawl("base plain", base, plain);
  await crawl("this plain", current, plain);
  await crawl("base json", base, json);
  await crawl("this json", current, json);
}
clearInterval(sampler);
const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
const means = (pick: (r: Result) => number[]) => Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, mean(pick(v))]));
console.log(JSON.stringify({ rounds, runs, meanCpuMsPerPage: means((r) => r.cpuMsPerPage), meanMainThreadCpuMsPerPage: means((r) => r.mainThreadCpuMsPerPage) }));
