// A/B of the json-format crawl cost between two commits, interleaved in one run (the machine is shared and noisy):
// `node bench/extract-ab.ts <checkout of the base commit, with node_modules> [rounds]`. Each round crawls the
// PostgreSQL manual in embedded mode four times — base plain, this plain, base with a json format, this with a json
// format — and the output gives CPU ms/page (the whole process, worker threads included) and pages/s of each.
import { join, resolve } from "node:path";
import { e2e as current } from "./e2e.ts";

const baseDir = process.argv[2];
if (!baseDir) throw new Error("usage: node bench/extract-ab.ts <checkout of the base commit> [rounds]");
const rounds = Number(process.argv[3] ?? 3);
const { e2e: base } = (await import(join(resolve(baseDir), "bench", "e2e.ts"))) as { e2e: typeof current };
const TABLE = { type: "object", properties: { title: { type: "string" }, rows: { type: "array", items: { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } } } } };
const plain = { formats: ["markdown"] };
const json = { formats: ["markdown", { type: "json", schema: TABLE }] };

const runs: Record<string, { cpuMsPerPage: number[]; pagesPerSecond: number[] }> = {};
const note = (name: string, r: { cpuSecondsPerPage: number; pagesPerSecond: number }) => {
  const run = (runs[name] ??= { cpuMsPerPage: [], pagesPerSecond: [] });
  run.cpuMsPerPage.push(+(r.cpuSecondsPerPage * 1000).toFixed(1));
  run.pagesPerSecond.push(r.pagesPerSecond);
};
for (let i = 0; i < rounds; i++) {
  note("base plain", await base("embedded", "pg", plain));
  note("this plain", await current("embedded", "pg", plain));
  note("base json", await base("embedded", "pg", json));
  note("this json", await current("embedded", "pg", json));
}
const mean = (xs: number[]) => +(xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(2);
console.log(JSON.stringify({ rounds, runs, meanCpuMsPerPage: Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, mean(v.cpuMsPerPage)])) }));
