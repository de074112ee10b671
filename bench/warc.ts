// Web archives' cost (issue 47): the embedded crawl of the PostgreSQL manual (1,169 pages) with the defaults, without
// and with WARC_DEFAULT=true (every page archived as request, response and metadata records, plus robots.txt and the
// sitemap), interleaved for BENCH_ROUNDS rounds (2; the order alternates): pages/s, CPU ms/page, and the WARC bytes
// written per page. The ratio of the rounds' medians decides the target (>= 85 % of the pages/s without).
// BENCH_WARC_ON_LOOP=1 adds a third crawl to each round: warc with WARC_WRITER_THREAD=false (records built, compressed
// and written on the event loop, as before the writer thread), reported as `...OnLoop`. Each row has the machine's
// load average (1 min) at its end; `mainThreadMsPerPage` is the CPU of the event loop's thread alone (/proc task
// MainThread), what the writer thread takes off it.
// usage: node bench/warc.ts
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { e2e } from "./e2e.ts";

const rounds = Number(process.env.BENCH_ROUNDS ?? 2);

function bytesUnder(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (name.endsWith(".warc.gz") && statSync(path).isFile()) n += statSync(path).size;
  }
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
type Variant = "without" | "with" | "onLoop";
const rows: { round: number; warc: boolean; variant: Variant; pagesPerSecond: number; cpuMsPerPage: number; mainThreadMsPerPage: number; warcBytesPerPage?: number; load1: number }[] = [];
const variants: Variant[] = process.env.BENCH_WARC_ON_LOOP === "1" ? ["without", "with", "onLoop"] : ["without", "with"];
for (let round = 1; round <= rounds; round++) {
  // the order turns each round
  const order = variants.map((_, i) => variants[(i + round - 1) % variants.length] as Variant);
  for (const variant of order) {
    const warc = variant !== "without";
    const dir = mkdtempSync(join(tmpdir(), "trawl-bench-warc-"));
    try {
      const env = { WARC_DEFAULT: String(warc), WARC_DIR: dir, ...(variant === "onLoop" ? { WARC_WRITER_THREAD: "false" } : {}) };
      const r = (await e2e("embedded", "pg", undefined, { crawls: 1, env })) as unknown as { pages: number; pagesPerSecond: number; cpuMsPerPage: { trawl: number }; threadMsPerPage: { trawl: Record<string, number> } };
      rows.push({ round, warc, variant, pagesPerSecond: r.pagesPerSecond, cpuMsPerPage: r.cpuMsPerPage.trawl, mainThreadMsPerPage: r.threadMsPerPage.trawl.MainThread ?? 0, ...(warc ? { warcBytesPerPage: Math.round(bytesUnder(dir) / r.pages) } : {}), load1: Number(loadavg()[0]!.toFixed(1)) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const of = (variant: Variant | boolean, key: "pagesPerSecond" | "cpuMsPerPage" | "mainThreadMsPerPage") =>
  median(rows.filter((r) => r.variant === (variant === true ? "with" : variant === false ? "without" : variant)).map((r) => r[key]));
const onLoop = variants.includes("onLoop")
  ? { pagesPerSecondOnLoop: of("onLoop", "pagesPerSecond"), ratioOnLoop: Number((of("onLoop", "pagesPerSecond") / of(false, "pagesPerSecond")).toFixed(3)), cpuMsPerPageOnLoop: of("onLoop", "cpuMsPerPage"), mainThreadMsPerPageOnLoop: of("onLoop", "mainThreadMsPerPage") }
  : {};
console.log(JSON.stringify({
  rows,
  pagesPerSecondWithout: of(false, "pagesPerSecond"), pagesPerSecondWith: of(true, "pagesPerSecond"),
  ratio: Number((of(true, "pagesPerSecond") / of(false, "pagesPerSecond")).toFixed(3)),
  cpuMsPerPageWithout: of(false, "cpuMsPerPage"), cpuMsPerPageWith: of(true, "cpuMsPerPage"),
  mainThreadMsPerPageWithout: of(false, "mainThreadMsPerPage"), mainThreadMsPerPageWith: of(true, "mainThreadMsPerPage"),
  warcBytesPerPage: median(rows.filter((r) => r.variant === "with").map((r) => r.warcBytesPerPage as number)),
  ...onLoop,
}));
