// End to end: start Trawl (embedded or cluster) as its own process, crawl a site through the public API, and report
// wall time, pages/s, time to first page, status latency (p50/p99) during the crawl, CPU seconds per page and peak
// RSS per process (Kafka and ClickHouse included in cluster mode).
// usage: node bench/e2e.ts embedded|cluster pg|synthetic:<pages>
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:net";
import { ensurePostgresManual, serveDirectory } from "./corpus.ts";
import { startSyntheticSite } from "./synthetic-site.ts";
import { cpuSeconds, descendants, peakBrowserMemory, peakRss } from "./proc.ts";

const ROOT = join(import.meta.dirname, "..");

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const pidOf = (file: string) => {
  try {
    return Number(readFileSync(join(ROOT, ".infra", file), "utf8").trim());
  } catch {
    return 0;
  }
};

/** `env`: extra settings of the Trawl process (e.g. RENDER); `limit`: pages to crawl (default: all). */
export async function e2e(mode: "embedded" | "cluster", siteSpec: string, scrapeOptions?: Record<string, unknown>, opts: { env?: Record<string, string>; limit?: number } = {}) {
  const site = siteSpec === "pg" ? await serveDirectory(ensurePostgresManual()) : await startSyntheticSite(Number(siteSpec.split(":")[1] ?? 1000));
  const start = siteSpec === "pg" ? `${site.origin}/docs/index.html` : `${site.origin}/site/p0.html`;
  const expected = siteSpec === "pg" ? undefined : Number(siteSpec.split(":")[1]);
  if (mode === "cluster") {
    const up = spawn("bash", [join(ROOT, "scripts/infra.sh"), "up", "kafka", "clickhouse"], { stdio: "inherit" });
    await new Promise((r) => up.on("exit", r));
  }
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
  const tag = `bench${Date.now().toString(36)}.`;
  const env = {
    ...process.env, TRAWL_MODE: mode, PORT: String(port), DATA_DIR: dataDir, ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "warn",
    MAX_CPU: "1", MAX_RAM: "1", KAFKA_TOPIC_PREFIX: tag, KAFKA_GROUP_PREFIX: tag, CLICKHOUSE_DATABASE: `trawl_${tag.slice(0, -1)}`, HOST_MAX_CONCURRENCY: "16",
    ...opts.env,
  };
  const t0 = performance.now();
  const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/trawl.js"), "all"], { env, stdio: ["ignore", "ignore", "inherit"] });
  const api = `http://127.0.0.1:${port}`;
  for (;;) {
    if (await fetch(`${api}/ready`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const readyMs = Math.round(performance.now() - t0);
  const pids: Record<string, number> = { trawl: child.pid as number };
  if (mode === "cluster") Object.assign(pids, { kafka: pidOf("kafka/kafka.pid"), clickhouse: pidOf("clickhouse/clickhouse.pid") });
  const rss = peakRss(pids);
  const cpu0 = cpuSeconds(child.pid as number);
  const browserMemory = peakBrowserMemory(child.pid as number);
  const t1 = performance.now();
  const res = await fetch(`${api}/v2/crawl`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: start, limit: opts.limit ?? 200_000, crawlEntireDomain: true, ...(scrapeOptions ? { scrapeOptions } : {}) }) });
  const { id } = (await res.json()) as { id: string };
  const latencies: number[] = [];
  let firstPageMs = 0;
  let status: { status: string; completed: number };
  const rssAt: Record<string, Record<string, number>> = {};
  for (;;) {
    const t = performance.now();
    status = (await (await fetch(`${api}/v2/crawl/${id}?limit=1`)).json()) as typeof status;
    latencies.push(performance.now() - t);
    if (!firstPageMs && status.completed > 0) firstPageMs = Math.round(performance.now() - t1);
    if (expected) for (const f of [0.1, 0.5]) if (!rssAt[f] && status.completed >= expected * f) rssAt[f] = rss.now();
    if (status.status !== "scraping") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t1) / 1000;
  rssAt["1"] = rss.now();
  // the browser processes are Trawl's children: their CPU counts (they run from the first rendered page on)
  const browserCpu = descendants(child.pid as number).reduce((n, p) => n + cpuSeconds(p), 0);
  const cpu = cpuSeconds(child.pid as number) - cpu0 + browserCpu;
  const browser = browserMemory.stop();
  const peak = rss.stop();
  latencies.sort((a, b) => a - b);
  const q = (x: number) => +(latencies[Math.min(latencies.length - 1, Math.floor(x * latencies.length))] as number).toFixed(1);
  child.kill("SIGTERM");
  await new Promise((r) => child.on("exit", r));
  await site.close();
  rmSync(dataDir, { recursive: true, force: true });
  return {
    mode, site: siteSpec, pages: status.completed, status: status.status, seconds: +seconds.toFixed(2), pagesPerSecond: +(status.completed / seconds).toFixed(1),
    readyMs, firstPageMs, statusP50Ms: q(0.5), statusP99Ms: q(0.99), cpuSecondsPerPage: +(cpu / Math.max(1, status.completed)).toFixed(4),
    peakRssMB: peak, ...(browser.browserPeakRssMB ? { ...browser, browserCpuSeconds: +browserCpu.toFixed(1) } : {}), ...(expected ? { rssMBAt10pct: rssAt["0.1"], rssMBAt50pct: rssAt["0.5"], rssMBAt100pct: rssAt["1"] } : {}),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [mode, site] = process.argv.slice(2);
  if ((mode !== "embedded" && mode !== "cluster") || !site) throw new Error("usage: e2e.ts embedded|cluster pg|synthetic:<pages> [RENDER] [limit]");
  const [render, limit] = process.argv.slice(4);
  console.log(JSON.stringify(await e2e(mode, site, undefined, { ...(render ? { env: { RENDER: render, RENDER_CONCURRENCY: "2" } } : {}), ...(limit ? { limit: Number(limit) } : {}) })));
}
