// What bench/run.ts prints of issue 48's scale runs (scale1m-embedded, scale1m-cluster): the summary cell and the goals,
// met or not, from an e2e.ts result; and the run's size (BENCH_SCALE_PAGES, BENCH_SCALE_HOSTS).

/** A goal's verdict as the bench table prints it. */
export const met = (ok: boolean, what: string) => `${ok ? "met" : "NOT met"}: ${what}`;

/** Issue 48's scale run: BENCH_SCALE_PAGES pages (1,000,000) over BENCH_SCALE_HOSTS hosts (1,000), 200 status readers. */
export const scalePages = Number(process.env.BENCH_SCALE_PAGES ?? 1_000_000);
export const scaleHosts = Number(process.env.BENCH_SCALE_HOSTS ?? 1_000);
export const scaleFile = (mode: string) => (scalePages === 1_000_000 && scaleHosts === 1_000 ? `scale1m${mode}` : `scale1m${mode}-${scalePages}x${scaleHosts}`);

interface Tenth { upTo: string; pagesPerSecond: number; cpuMsPerPage: Record<string, number>; rssMB: Record<string, number>; statusP99Ms?: number }
interface Paging { p50Ms: number; maxMs: number; pages: number }

export function scaleSummary(r: Record<string, unknown>): string {
  const tenths = (r.byTenth as Tenth[] | undefined) ?? [];
  const paging = r.paging as { statusNext: Paging; urls: Paging } | undefined;
  const cpu = Object.entries(r.cpuMsPerPage as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(", ");
  const rss = (k: string) => JSON.stringify(r[k]);
  return [
    `${r.mode}: ${r.pages} of ${r.crawlLimit} pages (${r.status}), ${r.seconds} s, ${r.pagesPerSecond} pages/s; CPU ms/page ${cpu}`,
    `pages/s by tenth: ${tenths.map((t) => t.pagesPerSecond).join(" / ")} (first tenth after the 1 % warm-up ${(r.firstTenthAfterWarmup as { pagesPerSecond: number } | undefined)?.pagesPerSecond})`,
    `trawl CPU ms/page by tenth: ${tenths.map((t) => t.cpuMsPerPage.trawl).join(" / ")}; status p99 by tenth: ${tenths.map((t) => t.statusP99Ms).join(" / ")} ms`,
    `RSS MB at 10 % ${rss("rssMBAt10pct")}, 50 % ${rss("rssMBAt50pct")}, 100 % ${rss("rssMBAt100pct")}; peak ${rss("peakRssMB")}`,
    `status (200 readers) p50 ${r.statusP50Ms} / p99 ${r.statusP99Ms} ms over ${r.statusReads} reads`,
    paging ? `at the end: status next paging p50 ${paging.statusNext.p50Ms} / max ${paging.statusNext.maxMs} ms (${paging.statusNext.pages} pages), /urls p50 ${paging.urls.p50Ms} / max ${paging.urls.maxMs} ms (${paging.urls.pages} pages)` : "",
  ].join("<br>");
}

/** Issue 48's goals for one mode's scale run. */
export function scaleTargets(r: Record<string, unknown>): string[] {
  const at = (k: string) => (r[k] as Record<string, number> | undefined) ?? {};
  const rss = Object.keys(at("rssMBAt10pct")).map((p) => {
    const a = Number(at("rssMBAt10pct")[p]);
    const b = Number(at("rssMBAt100pct")[p]);
    return met(b <= 1.2 * a, `${r.mode} ${p} RSS at 100 % <= 1.2x at 10 % (${a} -> ${b} MB = ${(b / a).toFixed(2)}x)`);
  });
  const tenths = (r.byTenth as Tenth[] | undefined) ?? [];
  const first = Number((r.firstTenthAfterWarmup as { pagesPerSecond: number } | undefined)?.pagesPerSecond);
  const last = Number(tenths.at(-1)?.pagesPerSecond);
  const paging = r.paging as { statusNext: Paging; urls: Paging } | undefined;
  return [
    met(r.pages === r.crawlLimit && r.status === "completed", `${r.mode} crawl completed with every page (${r.pages} of ${r.crawlLimit}, ${r.status})`),
    ...rss,
    met(tenths.length === 10 && last >= 0.9 * first, `${r.mode} last tenth >= 90 % of the first after warm-up (${last} vs ${first} pages/s = ${(last / first).toFixed(2)})`),
    met(Number(r.statusP99Ms) < 50, `${r.mode} status p99 < 50 ms with 200 readers (${r.statusP99Ms} ms)`),
    met(!!paging && paging.statusNext.maxMs < 100, `${r.mode} next paging of the status < 100 ms per page at the end (max ${paging?.statusNext.maxMs} ms)`),
    met(!!paging && paging.urls.maxMs < 100, `${r.mode} GET /v2/crawl/:id/urls < 100 ms per page at the end (max ${paging?.urls.maxMs} ms)`),
  ];
}
