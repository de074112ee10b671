// Web archives' cost (issue 47): the embedded crawl of the PostgreSQL manual (1,169 pages) with the defaults, without
// and with WARC_DEFAULT=true (every page archived as request, response and metadata records, plus robots.txt and the
// sitemap), interleaved for BENCH_ROUNDS rounds (2; the order alternates): pages/s, CPU ms/page, and the WARC bytes
// written per page. The ratio of the rounds' medians decides the target (>= 85 % of the pages/s without).
// usage: node bench/warc.ts
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
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
const rows: { round: number; warc: boolean; pagesPerSecond: number; cpuMsPerPage: number; warcBytesPerPage?: number }[] = [];
for (let round = 1; round <= rounds; round++) {
  for (const warc of round % 2 ? [false, true] : [true, false]) {
    const dir = mkdtempSync(join(tmpdir(), "trawl-bench-warc-"));
    try {
      const r = (await e2e("embedded", "pg", undefined, { crawls: 1, env: { WARC_DEFAULT: String(warc), WARC_DIR: dir } })) as unknown as { pages: number; pagesPerSecond: number; cpuMsPerPage: { trawl: number } };
      rows.push({ round, warc, pagesPerSecond: r.pagesPerSecond, cpuMsPerPage: r.cpuMsPerPage.trawl, ...(warc ? { warcBytesPerPage: Math.round(bytesUnder(dir) / r.pages) } : {}) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const of = (warc: boolean, key: "pagesPerSecond" | "cpuMsPerPage") => median(rows.filter((r) => r.warc === warc).map((r) => r[key]));
console.log(JSON.stringify({
  rows,
  pagesPerSecondWithout: of(false, "pagesPerSecond"), pagesPerSecondWith: of(true, "pagesPerSecond"),
  ratio: Number((of(true, "pagesPerSecond") / of(false, "pagesPerSecond")).toFixed(3)),
  cpuMsPerPageWithout: of(false, "cpuMsPerPage"), cpuMsPerPageWith: of(true, "cpuMsPerPage"),
  warcBytesPerPage: median(rows.filter((r) => r.warc).map((r) => r.warcBytesPerPage as number)),
}));
