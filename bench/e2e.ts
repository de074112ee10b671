// End to end: start Trawl (embedded or cluster) as its own process, crawl a site through the public API, and report
// wall time, pages/s, time to first page, status latency (p50/p99) during the crawl, CPU per page per process (Kafka
// and ClickHouse included in cluster mode) and peak RSS per process.
// Cluster mode starts its own Kafka and ClickHouse (private ports and data directory, through the project's scripts),
// so the first crawl is the first after the servers started and no other work on the machine counts as theirs.
// usage: node bench/e2e.ts embedded|cluster|cluster-api pg|synthetic:<pages>|hosts:<pages>:<hosts> [RENDER|-] [limit|-] [crawls] [readers]
// hosts:<pages>:<hosts>: a synthetic web of <hosts> hosts (h0.site.test ..., RESOLVE'd to loopback), <pages>/<hosts>
// pages each, crawled from host 0's first page (which links every host) with allowSubdomains and limit <pages>; the
// result adds each tenth of the crawl (pages/s, RSS and CPU per process, status latency) and, once the crawl is done,
// the latency of `next` paging of GET /v2/crawl/:id and of GET /v2/crawl/:id/urls at its start, middle and end.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePostgresManual, serveDirectory, siteLimitFrom } from "./corpus.ts";
import { startManyHostSite, startSyntheticSite } from "./synthetic-site.ts";
import { cpuSeconds, descendants, peakBrowserMemory, peakRss, rssMB, systemCpuSeconds, threadCpuSeconds } from "./proc.ts";
import { freePort, startOwnInfra, type OwnInfra } from "../test/integration/own-infra.ts";

const ROOT = join(import.meta.dirname, "..");

const pidIn = (file: string) => {
  try {
    return Number(readFileSync(file, "utf8").trim());
  } catch {
    return 0;
  }
};

export interface E2eOptions {
  /** extra settings of the Trawl process (e.g. RENDER) */
  env?: Record<string, string>;
  /** pages to crawl (default: all) */
  limit?: number;
  /** crawls of the site one after the other in the same Trawl process (the first is the first after start) */
  crawls?: number;
  /** status readers polling GET /v2/crawl/:id?limit=1 about once a second each during every crawl (0: one poller) */
  readers?: number;
  /** cluster mode: the API in a process of its own (`trawl api`), every other role in a second one, as deployed */
  apiProcess?: boolean;
}

/** `A=1,B=2` -> { A: "1", B: "2" } */
export function trawlEnv(text: string | undefined): Record<string, string> {
  return Object.fromEntries((text ?? "").split(",").filter((x) => x.includes("=")).map((x) => [x.slice(0, x.indexOf("=")).trim(), x.slice(x.indexOf("=") + 1).trim()]));
}

const quantile = (sorted: number[], x: number) => +(sorted[Math.min(sorted.length - 1, Math.floor(x * sorted.length))] ?? 0).toFixed(1);

/** Readers that each GET the crawl's status about once a second (jittered) until stopped, in their own process
 * (bench/status-readers.ts), warmed up before the crawl starts; `start` gives them the URL, `stop` their latencies and
 * their own worst event-loop stall. */
async function statusReaders(count: number): Promise<{ start(url: string): void; stop(): Promise<{ latencies: number[]; loopMaxMs: number }> }> {
  const child = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bench/status-readers.ts"), String(count)], { stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const exited = new Promise((r) => child.on("exit", r));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.startsWith("ready\n")) {
        out = out.slice("ready\n".length);
        child.stdout.removeAllListeners("data");
        child.stdout.on("data", (more: Buffer) => (out += more.toString()));
        resolve();
      }
    });
    void exited.then(() => reject(new Error("status readers exited before they were ready")));
  });
  return {
    start: (url) => child.stdin.write(url + "\n"),
    stop: async () => {
      child.stdin.end();
      await exited;
      return JSON.parse(out) as { latencies: number[]; loopMaxMs: number };
    },
  };
}

/** BENCH_LAG=1: each second, the messages every stage has not yet committed, by topic and group (stderr). */
async function printLag(api: string): Promise<void> {
  const text = await fetch(`${api}/metrics`).then((r) => r.text(), () => "");
  const lag = new Map<string, number>();
  for (const m of text.matchAll(/^trawl_consumer_lag\{topic="([^"]+)",group="([^"]+)"[^}]*\} (\d+)/gm)) {
    const key = `${m[1]}/${m[2]}`;
    lag.set(key, (lag.get(key) ?? 0) + Number(m[3]));
  }
  console.error([...lag].filter(([, n]) => n > 0).map(([k, n]) => `${k}=${n}`).join(" ") || "(no lag)");
}

/** BENCH_MEM=1: every 5 s, the API process's heap by V8 space, external memory and each process's RSS (stderr). */
async function printMemory(api: string, pids: Record<string, number>): Promise<void> {
  const text = await fetch(`${api}/metrics`).then((r) => r.text(), () => "");
  const mb = (re: RegExp) => Math.round(Number(re.exec(text)?.[1] ?? 0) / 1e6);
  const spaces = [...text.matchAll(/^nodejs_heap_space_size_used_bytes\{space="([^"]+)"[^}]*\} (\d+)/gm)].map((m) => `${m[1]}=${Math.round(Number(m[2]) / 1e6)}`);
  const completed = await fetch(api + "/v2/crawl/ongoing").then((r) => r.json() as Promise<{ crawls?: { completed?: number }[] }>, () => ({ crawls: [] }));
  console.error(`rss ${JSON.stringify(Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, rssMB(pid)])))} heapUsed ${mb(/^nodejs_heap_size_used_bytes\S* (\d+)/m)} heapTotal ${mb(/^nodejs_heap_size_total_bytes\S* (\d+)/m)} external ${mb(/^nodejs_external_memory_bytes\S* (\d+)/m)} MB; used by space ${spaces.join(" ")}; ${JSON.stringify(completed.crawls?.map((c) => c.completed))}`);
}

/** Queries the server ran, grouped by their first words (type 2 = finished), heaviest first; cpu: the query threads' user + system time. */
async function clickhouseQuerySummary(url: string): Promise<string> {
  await new Promise((r) => setTimeout(r, 1500)); // the log is flushed every second
  const cpuUs = (event: string) => `sum(arraySum(arrayFilter((v, k) -> k = '${event}', ProfileEvents.Values, ProfileEvents.Names)))`;
  const sql = `SELECT replaceRegexpAll(substring(query, 1, 70), '[0-9a-f-]{20,}|[0-9]+', 'N') AS q, count() AS n, sum(query_duration_ms) AS ms,
    round((${cpuUs("UserTimeMicroseconds")} + ${cpuUs("SystemTimeMicroseconds")}) / 1000) AS cpu_ms,
    sum(read_rows) AS read, sum(written_rows) AS written FROM system.query_log WHERE type = 2 GROUP BY q ORDER BY cpu_ms DESC LIMIT 25 FORMAT PrettyCompactNoEscapes`;
  return (await fetch(url, { method: "POST", body: sql })).text();
}

/** Asks a process started with --heapsnapshot-signal=SIGUSR2 for a heap snapshot; resolves once it answers /ready again. */
async function heapSnapshot(pid: number, api: string): Promise<void> {
  process.kill(pid, "SIGUSR2");
  await new Promise((r) => setTimeout(r, 200)); // the signal is handled on the process's next turn
  await fetch(`${api}/ready`);
}

interface Mark {
  share: number;
  completed: number;
  /** ms after the POST */
  ms: number;
  epochMs: number;
  rssMB: Record<string, number>;
  cpuS: Record<string, number>;
}

/**
 * Each tenth of a crawl from its marks: pages/s, CPU ms per page per process, RSS per process at its end, and the
 * status readers' p50/p99 over it. The first tenth runs from the POST; `firstTenthAfterWarmup` from the 1 % mark to
 * the 10 % mark (the first ~1 % is start-up: connections, JIT, the adaptive host limits growing).
 */
function tenthsOf(marks: Mark[], cpuStart: Record<string, number>, postEpochMs: number, read: { latencies: number[]; at?: number[] }) {
  const begin: Mark = { share: 0, completed: 0, ms: 0, epochMs: postEpochMs, rssMB: {}, cpuS: cpuStart };
  const warm = marks.find((m) => m.share === 0.01);
  const tenthMarks = marks.filter((m) => m.share >= 0.1);
  const rate = (a: Mark, b: Mark) => +((b.completed - a.completed) / Math.max(0.001, (b.ms - a.ms) / 1000)).toFixed(1);
  const cpu = (a: Mark, b: Mark) => Object.fromEntries(Object.keys(b.cpuS).map((k) => [k, +((1000 * ((b.cpuS[k] ?? 0) - (a.cpuS[k] ?? 0))) / Math.max(1, b.completed - a.completed)).toFixed(2)]));
  const reads = (a: Mark, b: Mark) => {
    if (!read.at) return {};
    const xs = read.latencies.filter((_, i) => (read.at?.[i] ?? 0) >= a.epochMs && (read.at?.[i] ?? 0) < b.epochMs).sort((x, y) => x - y);
    return { statusReads: xs.length, statusP50Ms: quantile(xs, 0.5), statusP99Ms: quantile(xs, 0.99) };
  };
  const byTenth = tenthMarks.map((m, i) => {
    const a = i === 0 ? begin : (tenthMarks[i - 1] as Mark);
    return { upTo: `${Math.round(m.share * 100)}%`, atS: +(m.ms / 1000).toFixed(1), pagesPerSecond: rate(a, m), cpuMsPerPage: cpu(a, m), rssMB: m.rssMB, ...reads(a, m) };
  });
  const ten = tenthMarks[0];
  return {
    byTenth,
    ...(warm && ten ? { firstTenthAfterWarmup: { from: warm.completed, to: ten.completed, pagesPerSecond: rate(warm, ten) } } : {}),
  };
}

/** Latency of reading a done crawl page by page: from skip 0, the middle and near the end, 5 pages each following `next`,
 * of GET /v2/crawl/:id (default page size) and GET /v2/crawl/:id/urls; ms until the whole body arrived. */
async function pagingLatency(api: string, id: string, total: number) {
  const walk = async (first: string) => {
    const ms: number[] = [];
    let items = 0;
    let url: string | undefined = first;
    for (let i = 0; i < 5 && url; i++) {
      const t = performance.now();
      const res: Response = await fetch(url);
      const text = await res.text();
      ms.push(+(performance.now() - t).toFixed(1));
      if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${text.slice(0, 300)}`);
      const body = JSON.parse(text) as { data?: unknown[]; next?: string; total?: number };
      items += body.data?.length ?? 0;
      listed = body.total ?? listed;
      url = body.next;
    }
    return { ms, items };
  };
  let listed = 0;
  const out: Record<string, { skip: number; ms: number[]; items: number }[]> = { status: [], urls: [] };
  for (const skip of [0, Math.floor(total / 2), Math.max(0, total - 300)]) out.status?.push({ skip, ...(await walk(`${api}/v2/crawl/${id}?skip=${skip}`)) });
  // the URL list holds CRAWL_URL_LOG_MAX crawled URLs at most plus the skipped ones: its own total, from its first page
  out.urls?.push({ skip: 0, ...(await walk(`${api}/v2/crawl/${id}/urls`)) });
  const urlsTotal = listed;
  for (const skip of [Math.floor(urlsTotal / 2), Math.max(0, urlsTotal - 300)]) out.urls?.push({ skip, ...(await walk(`${api}/v2/crawl/${id}/urls?skip=${skip}`)) });
  const summary = (list: { ms: number[] }[]) => {
    const all = list.flatMap((x) => x.ms).sort((a, b) => a - b);
    return { pages: all.length, p50Ms: quantile(all, 0.5), maxMs: all.at(-1) ?? 0 };
  };
  return { statusNext: summary(out.status ?? []), urls: { ...summary(out.urls ?? []), listed: urlsTotal }, detail: out };
}

export async function e2e(mode: "embedded" | "cluster", siteSpec: string, scrapeOptions?: Record<string, unknown>, opts: E2eOptions = {}) {
  // BENCH_VALIDATORS=1: the manual is served with ETag / Last-Modified and answers 304 (conditional recrawls)
  // BENCH_SITE_LIMIT=<inFlight>:<delayMs>: the manual's host answers 429 past that many requests at once (politeness)
  const limit = siteLimitFrom(process.env.BENCH_SITE_LIMIT);
  if (limit && siteSpec !== "pg") throw new Error("BENCH_SITE_LIMIT applies to the pg site only");
  const hostsSpec = /^hosts:(\d+):(\d+)$/.exec(siteSpec);
  if (siteSpec !== "pg" && !hostsSpec && !/^synthetic:\d+$/.test(siteSpec)) throw new Error(`unknown site ${siteSpec}: pg, synthetic:<pages> or hosts:<pages>:<hosts>`);
  const manyHosts = hostsSpec ? await startManyHostSite(Number(hostsSpec[1]), Number(hostsSpec[2])) : null;
  const site = siteSpec === "pg" ? await serveDirectory(ensurePostgresManual(), { validators: process.env.BENCH_VALIDATORS === "1", ...(limit ? { limit } : {}) }) : (manyHosts ?? await startSyntheticSite(Number(siteSpec.split(":")[1] ?? 1000)));
  const start = siteSpec === "pg" ? `${site.origin}/docs/index.html` : manyHosts ? manyHosts.start : `${site.origin}/site/p0.html`;
  const expected = siteSpec === "pg" ? undefined : Number(siteSpec.split(":")[1]);
  // when the site answered each request: where a crawl's time goes between the POST, the first and last fetch and the end
  const requestTimes: number[] = [];
  site.server.on("request", () => requestTimes.push(performance.now()));
  let infra: OwnInfra | null = null;
  // BENCH_CLICKHOUSE_QUERIES=1: the private ClickHouse logs its queries, and the run ends with a summary of them
  const queryLog = mode === "cluster" && process.env.BENCH_CLICKHOUSE_QUERIES === "1";
  if (queryLog) process.env.TRAWL_CLICKHOUSE_QUERY_LOG = "1";
  if (mode === "cluster") infra = await startOwnInfra();
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
  const children: ChildProcess[] = [];
  // also on a failed run: the private Kafka and ClickHouse and Trawl's processes would outlive the bench otherwise
  const stopAll = async () => {
    for (const proc of children) {
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      proc.kill("SIGTERM");
      await new Promise((r) => proc.on("exit", r));
    }
    await site.close();
    await infra?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    return await measure();
  } catch (err) {
    await stopAll().catch((e: unknown) => console.error(`bench cleanup after a failure: ${(e as Error).message}`));
    throw err;
  }

  async function measure() {
    const port = await freePort();
    // BENCH_HEAPSNAPSHOT=<dir>: heap snapshots of the trawl process where its RSS is sampled (synthetic sites: 10, 50 and
    // 100 % of each crawl), written by the process itself on SIGUSR2; its API answers again once one is written
    const snapshotDir = process.env.BENCH_HEAPSNAPSHOT;
    const env = {
      // the defaults of `npm start` / `npx trawl all`: only what a crawl of a loopback site needs, and where it runs
      ...process.env, TRAWL_MODE: mode, PORT: String(port), DATA_DIR: dataDir, ALLOW_PRIVATE_CRAWL_TARGETS: "true",
      // the many-host site's names, all on loopback (the one setting besides the defaults that such a crawl needs)
      ...(manyHosts ? { RESOLVE: manyHosts.resolve } : {}),
      // BENCH_TRAWL_ENV="HOST_MAX_CONCURRENCY=16,MAX_CPU=1": tuned settings, for rows labelled as such
      ...trawlEnv(process.env.BENCH_TRAWL_ENV),
      ...(infra ? { KAFKA_BROKERS: infra.kafkaBrokers, CLICKHOUSE_URL: infra.clickhouseUrl } : {}),
      ...opts.env,
      // BENCH_TRAWL_NODE_OPTIONS: Node/V8 flags for Trawl's processes only (not the bench's site server or readers)
      ...(process.env.BENCH_TRAWL_NODE_OPTIONS || snapshotDir ? { NODE_OPTIONS: [process.env.BENCH_TRAWL_NODE_OPTIONS, snapshotDir && `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}`].filter(Boolean).join(" ") } : {}),
    };
    const t0 = performance.now();
    const trawl = (role: string, extra: Record<string, string> = {}) => {
      const proc = spawn(join(ROOT, "node_modules/.bin/node"), [join(ROOT, "bin/trawl.js"), role], { env: { ...env, ...extra }, stdio: ["ignore", "ignore", "inherit"] });
      children.push(proc);
      return proc;
    };
    const split = mode === "cluster" && opts.apiProcess === true;
    // split: the pipeline process answers /ready on its METRICS_PORT
    const pipelinePort = split ? await freePort() : 0;
    const child = split ? trawl("frontier,fetch-render,render,convert,extract-json,sink,webhook-emit", { METRICS_PORT: String(pipelinePort) }) : trawl("all");
    const apiChild = split ? trawl("api") : null;
    const api = `http://127.0.0.1:${port}`;
    for (const [proc, url] of [[child, split ? `http://127.0.0.1:${pipelinePort}` : api], ...(apiChild ? [[apiChild, api] as const] : [])] as const) {
      for (;;) {
        if (await fetch(`${url}/ready`).then((r) => r.ok, () => false)) break;
        if (proc.exitCode !== null) throw new Error(`trawl exited with ${proc.exitCode} before it was ready`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const readyMs = Math.round(performance.now() - t0);
    const pids: Record<string, number> = { trawl: child.pid as number, ...(apiChild ? { "trawl-api": apiChild.pid as number } : {}) };
    if (infra) Object.assign(pids, { kafka: pidIn(join(infra.dir, "kafka", "kafka.pid")), clickhouse: pidIn(join(infra.dir, "clickhouse", "clickhouse.pid")) });
    const rss = peakRss(pids);
    const browserMemory = peakBrowserMemory(child.pid as number);

    const crawlOnce = async () => {
      const readers = opts.readers ? await statusReaders(opts.readers) : null;
      // every process's CPU over the crawl (Kafka and ClickHouse too in cluster mode): the per-process cost of a page
      const cpuStart = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
      const sysStart = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, systemCpuSeconds(pid)]));
      const threadsStart = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, threadCpuSeconds(pid)]));
      const browserCpu0 = descendants(child.pid as number).reduce((n, p) => n + cpuSeconds(p), 0);
      const answers = () => (site as { answered?: Record<number, number> }).answered;
      const answered0: Record<string, number> = { ...answers() };
      const t1 = performance.now();
      const crawlLimit = opts.limit ?? (manyHosts ? expected : 200_000);
      const res = await fetch(`${api}/v2/crawl`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: start, limit: crawlLimit, crawlEntireDomain: true, ...(manyHosts ? { allowSubdomains: true } : {}), ...(scrapeOptions ? { scrapeOptions } : {}) }) });
      if (!res.ok) throw new Error(`POST /v2/crawl answered ${res.status}: ${await res.text()}`);
      const { id } = (await res.json()) as { id: string };
      const lagTimer = process.env.BENCH_LAG === "1" ? setInterval(() => void printLag(api), 1000) : undefined;
      const memTimer = process.env.BENCH_MEM === "1" ? setInterval(() => void printMemory(api, pids), 5000) : undefined;
      readers?.start(`${api}/v2/crawl/${id}?limit=1`);
      const polls: number[] = [];
      let firstPageMs = 0;
      let status: { status: string; completed: number };
      const rssAt: Record<string, Record<string, number>> = {};
      // synthetic sites: when each tenth of the expected pages was done (and 1 %, the warm-up's end), with every
      // process's RSS and CPU then
      const marks: Mark[] = [];
      const tenths = expected ? [0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1] : [];
      for (;;) {
        const t = performance.now();
        status = (await (await fetch(`${api}/v2/crawl/${id}?limit=1`)).json()) as typeof status;
        polls.push(performance.now() - t);
        if (!firstPageMs && status.completed > 0) firstPageMs = Math.round(performance.now() - t1);
        while (expected && marks.length < tenths.length && status.completed >= expected * (tenths[marks.length] as number)) {
          marks.push({ share: tenths[marks.length] as number, completed: status.completed, ms: Math.round(performance.now() - t1), epochMs: Math.round(performance.timeOrigin + performance.now()), rssMB: rss.now(), cpuS: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)])) });
        }
        if (expected) {
          for (const f of [0.1, 0.5]) {
            if (rssAt[f] || status.completed < expected * f) continue;
            rssAt[f] = rss.now();
            if (snapshotDir) await heapSnapshot(child.pid as number, api);
          }
        }
        if (status.status !== "scraping") break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t1) / 1000;
      const fetched = requestTimes.filter((t) => t >= t1);
      const sinceStart = (t: number | undefined) => (t === undefined ? undefined : Math.round(t - t1));
      // POST to the site's first request, to its last one, and to the status that said the crawl was done
      const timeline = { firstRequestMs: sinceStart(fetched[0]), lastRequestMs: sinceStart(fetched.at(-1)), doneMs: Math.round(1000 * seconds) };
      clearInterval(lagTimer);
      clearInterval(memTimer);
      rssAt["1"] = rss.now();
      if (snapshotDir && expected) await heapSnapshot(child.pid as number, api);
      const read: { latencies: number[]; at?: number[]; loopMaxMs?: number } = readers ? await readers.stop() : { latencies: polls, loopMaxMs: undefined };
      const byTenth = marks.length ? tenthsOf(marks, cpuStart, Math.round(performance.timeOrigin + t1), read) : undefined;
      // once the crawl is done (readers stopped): `next` paging of the status and of the URL list
      const paging = manyHosts ? await pagingLatency(api, id, status.completed) : undefined;
      const latencies = read.latencies.sort((a, b) => a - b);
      // the browser processes are Trawl's children: their CPU counts (they run from the first rendered page on)
      const browserCpu = descendants(child.pid as number).reduce((n, p) => n + cpuSeconds(p), 0) - browserCpu0;
      const perPageMs = (s: number) => +((1000 * s) / Math.max(1, status.completed)).toFixed(2);
      const cpuMsPerPage: Record<string, number> = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, perPageMs(cpuSeconds(pid) - (cpuStart[k] ?? 0) + (k === "trawl" ? browserCpu : 0))]));
      cpuMsPerPage.total = +Object.values(cpuMsPerPage).reduce((a, b) => a + b, 0).toFixed(2);
      // the kernel's part of each process's CPU
      const systemMsPerPage = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, perPageMs(systemCpuSeconds(pid) - (sysStart[k] ?? 0))]));
      // per process, its thread groups over 5 % of its CPU (threads that ended during the crawl are not counted)
      const threadMsPerPage = Object.fromEntries(Object.entries(pids).map(([k, pid]) => {
        const before = threadsStart[k] ?? {};
        const spent = Object.entries(threadCpuSeconds(pid)).map(([name, s]) => [name, s - (before[name] ?? 0)] as const);
        const sum = spent.reduce((n, [, s]) => n + s, 0);
        return [k, Object.fromEntries(spent.filter(([, s]) => s > 0.05 * sum).sort((a, b) => b[1] - a[1]).map(([name, s]) => [name, perPageMs(s)]))];
      }));
      return {
        latencies,
        // a rate-limited host's answers to this crawl, by status
        ...(answers() ? { siteAnswers: Object.fromEntries(Object.entries(answers() ?? {}).map(([code, n]) => [code, n - (answered0[code] ?? 0)])) } : {}),
        pages: status.completed, status: status.status, seconds: +seconds.toFixed(2), pagesPerSecond: +(status.completed / seconds).toFixed(1), firstPageMs, timeline,
        statusReads: latencies.length, statusReaders: opts.readers ?? 1, statusP50Ms: quantile(latencies, 0.5), statusP99Ms: quantile(latencies, 0.99),
        ...(read.loopMaxMs !== undefined ? { readersLoopMaxMs: read.loopMaxMs } : {}),
        cpuSecondsPerPage: +((cpuMsPerPage.trawl ?? 0) / 1000).toFixed(4), cpuMsPerPage, systemMsPerPage, threadMsPerPage, ...(browserCpu > 0 ? { browserCpuSeconds: +browserCpu.toFixed(1) } : {}),
        ...(expected ? { rssMBAt10pct: rssAt["0.1"], rssMBAt50pct: rssAt["0.5"], rssMBAt100pct: rssAt["1"] } : {}),
        ...(byTenth ? { crawlLimit, ...byTenth } : {}),
        ...(paging ? { paging } : {}),
        ...(manyHosts ? { siteServed: { hosts: manyHosts.requestsPerHost.length, hostsReached: manyHosts.requestsPerHost.filter((n) => n > 0).length, requests: manyHosts.requestsPerHost.reduce((a, b) => a + b, 0), pages: manyHosts.pageRequests() } } : {}),
      };
    };

    const runs = [];
    for (let i = 0; i < (opts.crawls ?? 1); i++) runs.push(await crawlOnce());
    if (queryLog && infra) console.error(await clickhouseQuerySummary(infra.clickhouseUrl));
    // BENCH_IDLE_S=<s>: each process's CPU while nothing is crawled, ms per second over <s> seconds after the last crawl
    // (the fixed cost every crawl pays on top of its pages: polling consumers, heartbeats, timers, background merges)
    const idleSeconds = Number(process.env.BENCH_IDLE_S ?? 0);
    let idleCpuMsPerSecond: Record<string, number> | undefined;
    if (idleSeconds > 0) {
      const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
      await new Promise((r) => setTimeout(r, idleSeconds * 1000));
      idleCpuMsPerSecond = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, +((1000 * (cpuSeconds(pid) - (before[k] ?? 0))) / idleSeconds).toFixed(1)]));
    }
    const browser = browserMemory.stop();
    const peak = rss.stop();
    await stopAll();
    const [first, ...later] = runs.map(({ latencies: _, ...run }) => run) as [Omit<Awaited<ReturnType<typeof crawlOnce>>, "latencies">, ...Omit<Awaited<ReturnType<typeof crawlOnce>>, "latencies">[]];
    // with readers over several crawls: their reads pooled (a crawl of the manual is a few seconds: ~500 reads each)
    const pooled = opts.readers && runs.length > 1 ? runs.flatMap((r) => r.latencies).sort((a, b) => a - b) : null;
    const statusAll = pooled ? { statusAllReads: pooled.length, statusAllP50Ms: quantile(pooled, 0.5), statusAllP99Ms: quantile(pooled, 0.99) } : {};
    return { mode, ...(opts.apiProcess ? { apiProcess: true } : {}), site: siteSpec, readyMs, ...first, ...statusAll, peakRssMB: peak, ...(idleCpuMsPerSecond ? { idleCpuMsPerSecond } : {}), ...(browser.browserPeakRssMB ? browser : {}), ...(later.length ? { later } : {}) };
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [arg, site, render, limit, crawls, readers] = process.argv.slice(2);
  // cluster-api: cluster mode with the API in a process of its own
  const mode = arg === "cluster-api" ? "cluster" : arg;
  if ((mode !== "embedded" && mode !== "cluster") || !site) throw new Error("usage: e2e.ts embedded|cluster|cluster-api pg|synthetic:<pages> [RENDER|-] [limit|-] [crawls] [readers]");
  const opts: E2eOptions = {};
  if (render && render !== "-") opts.env = { RENDER: render, RENDER_CONCURRENCY: "2" };
  if (limit && limit !== "-") opts.limit = Number(limit);
  if (crawls) opts.crawls = Number(crawls);
  if (readers) opts.readers = Number(readers);
  if (arg === "cluster-api") opts.apiProcess = true;
  // BENCH_CHANGE_TRACKING=1: every crawl with the changeTracking format (the second and later ones compare and revalidate)
  const scrapeOptions = process.env.BENCH_CHANGE_TRACKING === "1" ? { formats: ["markdown", { type: "changeTracking" }] } : undefined;
  console.log(JSON.stringify(await e2e(mode, site, scrapeOptions, opts)));
}
