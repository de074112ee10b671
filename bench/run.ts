// `npm run bench [-- name ...]`: runs benchmarks, prints one table with targets (met / not met), and writes
// bench/results/<date>-<name>.json with the machine's core count, the Node version and the git commit.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { met, scaleFile, scaleHosts, scalePages, scaleSummary, scaleTargets } from "./scale-summary.ts";
import { settle } from "./settle.ts";

const here = import.meta.dirname;
const node = process.execPath;

interface Bench {
  describe: string;
  run: () => Record<string, unknown>;
  /** one readable cell for the table (default: every field) */
  summary?: (r: Record<string, unknown>) => string;
  targets?: (r: Record<string, unknown>, all: Record<string, Record<string, unknown>>) => string[];
  /** results file name after the date (default: the bench's name) */
  file?: string;
}

const script = (file: string, ...args: string[]) => scriptWith({}, file, ...args);
/** `env`: extra settings of the bench process (BENCH_TRAWL_ENV: settings of Trawl's own process, for tuned rows) */
const scriptWith = (env: Record<string, string>, file: string, ...args: string[]) => () => {
  const out = execFileSync(node, ["--expose-gc", join(here, file), ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } });
  return JSON.parse(out.trim().split("\n").at(-1) as string) as Record<string, unknown>;
};

interface ConvertCorpus {
  ours: { mbPerSecond: number; slowestPass: number; fastestPass: number; p50Ms: number; p99Ms: number };
  turndown: { mbPerSecond: number; p50Ms: number; p99Ms: number };
  ratio: number;
  fidelity: { pages: number; markdownDiffers: number };
  mainContent: { pagesWithNavListOnly: number; pagesWithNavScored: number; firstHeadingKept: number; pagesWithHeading: number };
}


/**
 * The benchmarks' temporary files (their Kafka's and ClickHouse's data, embedded data directories) on a journaled
 * scratch file system when the temporary directory is an ext4 without a journal (this project's build machines; a
 * ClickHouse started after another run deleted its data spent half its CPU in the kernel: `scripts/scratch.sh` says
 * why), as a production volume has; unmounted and deleted at the end. BENCH_SCRATCH=plain: the temporary directory as
 * it is.
 */
function journaledScratch(): void {
  if (process.env.BENCH_SCRATCH === "plain") return;
  const script = join(here, "..", "scripts", "scratch.sh");
  const dir = execFileSync("bash", [script, "up"], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  if (!dir) return;
  const mount = join(dir, "mnt");
  console.error(`bench: temporary files on a journaled ext4 (${mount}): ${tmpdir()} is an ext4 without a journal (BENCH_SCRATCH=plain: use it as it is)`);
  process.env.TMPDIR = mount;
  process.on("exit", () => {
    try {
      execFileSync("bash", [script, "down", dir], { stdio: "inherit" });
    } catch {
      console.error(`bench: umount ${mount} and delete ${dir} by hand`);
    }
  });
  // Ctrl-C or a kill: the exit handler above still unmounts
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130));
}


/** RSS of every process the run measured (trawl; in cluster mode Kafka and ClickHouse too) within 20 % of its 10 % point. */
function rssFlat(r: Record<string, unknown>) {
  const at = ["rssMBAt10pct", "rssMBAt50pct", "rssMBAt100pct"].map((k) => (r[k] as Record<string, number> | undefined) ?? {});
  const procs = Object.keys(at[0] as Record<string, number>);
  return procs.map((p) => {
    const [a, mid, b] = at.map((x) => Number(x[p])) as [number, number, number];
    return met([mid, b].every((x) => Math.abs(x - a) <= 0.2 * a), `${procs.length > 1 ? `${p} ` : ""}RSS flat within 20% from 10% to 100% (${a} -> ${mid} -> ${b} MB)`);
  });
}

/** The crawls of an end-to-end result: the first after start, then the later ones. */
const runsOf = (r: Record<string, unknown>) => [r, ...((r.later as Record<string, unknown>[] | undefined) ?? [])];

/** pages/s of each crawl against the peer's, both numbers of the same run. */
const ratioTargets = (r: Record<string, unknown>, peer: number, factor: number) =>
  runsOf(r).map((x, i) => met(Number(x.pagesPerSecond) >= factor * peer, `${i === 0 ? "first crawl" : `crawl ${i + 1}`} >= ${factor}x Crawlee (${x.pagesPerSecond} vs ${peer} pages/s = ${(Number(x.pagesPerSecond) / peer).toFixed(2)}x)`));

/** Issue 34's goal for the first crawl after start with the defaults (the row above it is the older target). */
const firstCrawlGoal = (r: Record<string, unknown>, peer: number, factor: number) => {
  const first = Number(runsOf(r)[0]?.pagesPerSecond);
  return met(first >= factor * peer, `issue 34 goal: first crawl >= ${factor}x Crawlee (${first} vs ${peer} pages/s = ${(first / peer).toFixed(2)}x)`);
};

/** Crawlee (CheerioCrawler + turndown, 16 concurrent requests) crawling the PostgreSQL manual once: the peer's pages/s. */
function crawlee(): Record<string, unknown> {
  const out = execFileSync(node, ["-e", `
    const { serveDirectory, ensurePostgresManual } = await import(${JSON.stringify(join(here, "corpus.ts"))});
    const { crawleeRun } = await import(${JSON.stringify(join(here, "crawlee-peer.ts"))});
    const site = await serveDirectory(ensurePostgresManual());
    console.log(JSON.stringify(await crawleeRun(site.origin + "/docs/index.html", site.origin + "/docs/")));
    await site.close();`], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, CRAWLEE_LOG_LEVEL: "WARNING" } });
  return JSON.parse(out.trim().split("\n").at(-1) as string);
}

function e2eSummary(r: Record<string, unknown>): string {
  const crawls = runsOf(r).map((x, i) => {
    const cpu = Object.entries(x.cpuMsPerPage as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(", ");
    return `crawl ${i + 1}: ${x.pages} pages, ${x.pagesPerSecond} pages/s, first page ${x.firstPageMs} ms, status p50 ${x.statusP50Ms} / p99 ${x.statusP99Ms} ms, CPU ms/page ${cpu}`;
  });
  return [`ready ${r.readyMs} ms; peak RSS MB ${JSON.stringify(r.peakRssMB)}`, ...crawls].join("<br>");
}

const scaleRun = (mode: "embedded" | "cluster") => script("e2e.ts", mode, `hosts:${scalePages}:${scaleHosts}`, "-", "-", "1", "200");

const benches: Record<string, Bench> = {
  "store-scale": {
    describe: "issue 48: the embedded store at the end of a 1,000,000-document crawl (DOCS), filled through the store port: bytes of memory per document, restart to the first /health answer and its RSS against an empty DATA_DIR, paging latencies (`node bench/store-scale.ts <checkout>` for a base commit)",
    run: script("store-scale.ts"),
    targets: (r) => {
      const paging = r.pagingMs as Record<string, number[]>;
      const warm = (k: string) => Math.max(...(paging[k] ?? [Infinity]).slice(1));
      return [
        met(Number(r.heldSecondHalfBytesPerDoc) <= 32, `<= 16 bytes per document in the store and 16 in the page cache (${r.heldSecondHalfBytesPerDoc} held per document over the second half)`),
        met(Number(r.readyMs) - Number(r.emptyReadyMs) < 5000, `restart answers /health < 5 s later than on an empty DATA_DIR (${r.readyMs} ms against ${r.emptyReadyMs})`),
        met(Number(r.rssAtFirstAnswerMB) <= 1.1 * Number(r.rssEmptyStartMB), `RSS at restart <= empty + 10 % (${r.rssAtFirstAnswerMB} MB against ${r.rssEmptyStartMB})`),
        met(Math.max(warm("statusFirst"), warm("statusMiddle"), warm("statusEnd"), ...(paging.nextWalk ?? [])) < 100, `next paging < 100 ms per page (${JSON.stringify({ first: paging.statusFirst, middle: paging.statusMiddle, end: paging.statusEnd, next: paging.nextWalk })})`),
        met(Math.max(warm("urlsFirst"), warm("urlsEnd")) < 100, `/urls < 100 ms per page once its listing is built (first read builds it: ${paging.urlsFirst?.[0]} ms; ${JSON.stringify({ first: paging.urlsFirst, end: paging.urlsEnd })})`),
      ];
    },
  },
  frontier: {
    describe: "frontier state memory, 1,000,000 URLs: bytes per URL from 10 % to 100 % (issue 48: <= 16)",
    run: script("frontier-memory.ts", "1000000"),
    targets: (r) => [met(Number(r.bytesPerUrl) <= 16, `<= 16 bytes per seen URL (${r.bytesPerUrl}; whole state at ${r.urls} URLs: ${r.bytesPerUrlAtN} per URL, of which ${r.fixedPerCrawlMB} MB per crawl whatever its size)`)],
  },
  convert: {
    describe: "convert stage vs plain turndown: PostgreSQL 15 manual and Python 3.11 docs; parser fidelity; main content",
    run: script("convert.ts"),
    summary: (r) => ["postgresql", "python"].map((corpus) => {
      const c = r[corpus] as ConvertCorpus;
      return `${corpus}: ${c.ours.mbPerSecond} MB/s (passes ${c.ours.slowestPass}-${c.ours.fastestPass}; p50 ${c.ours.p50Ms} / p99 ${c.ours.p99Ms} ms) vs turndown ${c.turndown.mbPerSecond} MB/s (p50 ${c.turndown.p50Ms} / p99 ${c.turndown.p99Ms} ms) = ${c.ratio}x; ` +
        `markdown differing from parse5's tree on ${c.fidelity.markdownDiffers}/${c.fidelity.pages} pages; pages with site navigation left ${c.mainContent.pagesWithNavListOnly} -> ${c.mainContent.pagesWithNavScored}, first heading kept ${c.mainContent.firstHeadingKept}/${c.mainContent.pagesWithHeading}`;
    }).join("<br>"),
    targets: (r) => ["postgresql", "python"].map((corpus) => met((r[corpus] as ConvertCorpus).ours.mbPerSecond >= 30, `${corpus} >= 30 MB/s per core`)),
  },
  peer: {
    describe: "Crawlee CheerioCrawler + turndown, PostgreSQL manual",
    run: crawlee,
  },
  goals: {
    describe: "issue 34's first-crawl goals with the defaults (embedded >= 5x Crawlee, cluster >= 3x), decided on the median of BENCH_ROUNDS (3) rounds: a round runs Crawlee, Trawl embedded and Trawl cluster (each the first crawl after start) one after the other, in an order rotated round by round, and divides each Trawl run's pages/s by that round's Crawlee. Crawlee alone ran at 72-117 pages/s on one evening here, so one pair decides partly by chance",
    run: () => {
      const runs: Record<string, () => Record<string, unknown>> = { crawlee, embedded: script("e2e.ts", "embedded", "pg", "-", "-", "1"), cluster: script("e2e.ts", "cluster", "pg", "-", "-", "1") };
      const order = Object.keys(runs);
      const rounds = Array.from({ length: Number(process.env.BENCH_ROUNDS ?? 3) }, (_, r) => {
        const round: Record<string, number> = {};
        for (const name of [...order.slice(r % order.length), ...order.slice(0, r % order.length)]) {
          settle();
          round[name] = Number((runs[name] as () => Record<string, unknown>)().pagesPerSecond);
        }
        return { ...round, embeddedRatio: +(Number(round.embedded) / Number(round.crawlee)).toFixed(2), clusterRatio: +(Number(round.cluster) / Number(round.crawlee)).toFixed(2) };
      });
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
      return { rounds, embeddedMedianRatio: median(rounds.map((r) => r.embeddedRatio)), clusterMedianRatio: median(rounds.map((r) => r.clusterRatio)) };
    },
    summary: (r) => (r.rounds as Record<string, number>[]).map((x, i) => `round ${i + 1}: Crawlee ${x.crawlee}, embedded ${x.embedded} (${x.embeddedRatio}x), cluster ${x.cluster} (${x.clusterRatio}x) pages/s`).join("<br>"),
    targets: (r) => [
      met(Number(r.embeddedMedianRatio) >= 5, `embedded first crawl >= 5x Crawlee, median of the rounds (${r.embeddedMedianRatio}x)`),
      met(Number(r.clusterMedianRatio) >= 3, `cluster first crawl >= 3x Crawlee, median of the rounds (${r.clusterMedianRatio}x)`),
    ],
  },
  polite: {
    describe: "politeness on a rate-limited host: the manual served by a host that answers 429 past 6 requests at once and takes 20 ms per page; Crawlee (the peer's 16 concurrent requests), then Trawl embedded with the defaults. The host's answers by status, pages stored, pages/s",
    run: script("politeness.ts", "6:20"),
    summary: (r) => {
      const row = (name: string, x: Record<string, unknown>) => `${name}: ${x.pages} pages, ${x.pagesPerSecond} pages/s, answers ${JSON.stringify(x.siteAnswers)}`;
      return `${row("Crawlee", r.crawlee as Record<string, unknown>)}<br>${row("Trawl", r.trawl as Record<string, unknown>)}`;
    },
    targets: (r) => [met(Number(r.trawl429) <= Number(r.crawlee429), `no more 429s than Crawlee (${r.trawl429} vs ${r.crawlee429})`)],
  },
  extract: {
    describe: "extract-json: rules provider on the PostgreSQL manual with a table schema; embedded crawl of the manual with and without a json format",
    run: script("extract.ts"),
    summary: (r) => {
      type Crawl = { pages: number; pagesPerSecond: number; again: number; cpuSecondsPerPage: number[] };
      const x = r as { rules: { pages: number; pagesPerSecond: number; pagesWithRows: number; rows: number }; crawlWithoutJson: Crawl; crawlWithJson: Crawl };
      const cpu = (c: Crawl) => c.cpuSecondsPerPage.map((s) => (s * 1000).toFixed(1)).join(" / ");
      return `rules: ${x.rules.pagesPerSecond} pages/s over ${x.rules.pages} pages (${x.rules.rows} rows from ${x.rules.pagesWithRows} pages)<br>` +
        `crawl without json ${x.crawlWithoutJson.pagesPerSecond} / ${x.crawlWithoutJson.again} pages/s (${cpu(x.crawlWithoutJson)} CPU ms/page), ` +
        `with json ${x.crawlWithJson.pagesPerSecond} / ${x.crawlWithJson.again} pages/s (${cpu(x.crawlWithJson)} CPU ms/page; ${x.crawlWithJson.pages} pages)`;
    },
  },
  embedded: {
    describe: "embedded mode end to end, PostgreSQL manual through the API, crawled twice by one process (first and second crawl after start)",
    run: script("e2e.ts", "embedded", "pg", "-", "-", "2"),
    summary: (r) => e2eSummary(r),
    targets: (r, all) => [
      met(Number(r.pagesPerSecond) >= 130, ">= 130 pages/s"),
      ...(all.peer ? ratioTargets(r, Number(all.peer.pagesPerSecond), 4) : []),
      ...(all.peer ? [firstCrawlGoal(r, Number(all.peer.pagesPerSecond), 5)] : []),
    ],
  },
  "embedded-tuned": {
    describe: "TUNED, not the defaults (not in the default set): the embedded row with HOST_MAX_CONCURRENCY=16 MAX_CPU=1 MAX_RAM=1, the settings every row ran with before issue 34",
    run: scriptWith({ BENCH_TRAWL_ENV: "HOST_MAX_CONCURRENCY=16,MAX_CPU=1,MAX_RAM=1" }, "e2e.ts", "embedded", "pg", "-", "-", "2"),
    summary: (r) => e2eSummary(r),
    targets: (r, all) => (all.peer ? ratioTargets(r, Number(all.peer.pagesPerSecond), 4) : []),
  },
  cluster: {
    describe: "cluster mode end to end on its own Kafka + ClickHouse started for the run (every role in one process, all on the same cores), PostgreSQL manual crawled twice: the first crawl after start and the next",
    run: script("e2e.ts", "cluster", "pg", "-", "-", "2"),
    summary: (r) => e2eSummary(r),
    targets: (r, all) => {
      const out = all.peer ? [...ratioTargets(r, Number(all.peer.pagesPerSecond), 2), firstCrawlGoal(r, Number(all.peer.pagesPerSecond), 3)] : [];
      // each crawl against the embedded crawl of the same rank (the first after start pays both processes' JIT)
      const totalOf = (x: Record<string, unknown>) => Number((x.cpuMsPerPage as Record<string, number>).total);
      const cpu = runsOf(r).map(totalOf);
      const embedded = all.embedded ? runsOf(all.embedded).map(totalOf) : [];
      if (embedded.length >= cpu.length) {
        const ratios = cpu.map((c, i) => c / (embedded[i] as number));
        out.push(met(Math.max(...ratios) <= 1.5, `CPU per page over every process <= 1.5x embedded, crawl by crawl (${cpu.join(" / ")} vs ${embedded.slice(0, cpu.length).join(" / ")} ms: ${ratios.map((x) => x.toFixed(2)).join(" / ")}x)`));
      }
      return out;
    },
  },
  status: {
    describe: "GET /v2/crawl/:id?limit=1 latency during 3 crawls of the manual one after the other (the first after start), 200 concurrent readers in a process of their own (each reads about once a second); p99 over every read of the 3 crawls, and per crawl. Embedded: one process. Cluster as deployed: the API in a process of its own (`trawl api`), every other role in a second. Cluster all-in-one (`trawl all`, API sharing its event loop with every stage) is shown, not a target",
    run: () => {
      const embedded = script("e2e.ts", "embedded", "pg", "-", "-", "3", "200")();
      settle();
      const cluster = script("e2e.ts", "cluster-api", "pg", "-", "-", "3", "200")();
      settle();
      return { embedded, cluster, clusterAllInOne: script("e2e.ts", "cluster", "pg", "-", "-", "3", "200")() };
    },
    summary: (r) => ([["embedded", "embedded"], ["cluster", "cluster (API process)"], ["clusterAllInOne", "cluster all-in-one"]] as const).map(([m, label]) => {
      const x = r[m] as Record<string, number>;
      const crawls = runsOf(r[m] as Record<string, unknown>).map((c) => `${c.statusP99Ms} ms at ${c.pagesPerSecond} pages/s`).join(", ");
      return `${label}: ${x.statusAllReads} reads, p50 ${x.statusAllP50Ms} ms, p99 ${x.statusAllP99Ms} ms (p99 per crawl: ${crawls})`;
    }).join("<br>"),
    targets: (r) => (["embedded", "cluster"] as const).map((m) => met(Number((r[m] as Record<string, number>).statusAllP99Ms) < 50, `${m} p99 < 50 ms with 200 readers`)),
  },
  scale10k: {
    describe: "embedded mode, synthetic site of 10,000 pages: pages/s and RSS at 10/50/100% (a quick proxy of scale100k; its 10% point is taken before the heap reached its working size)",
    run: script("e2e.ts", "embedded", "synthetic:10000"),
    targets: (r) => [...rssFlat(r), met(Number(r.statusP99Ms) < 50, "status p99 < 50 ms")],
  },
  render: {
    describe: "rendering, embedded, PostgreSQL manual: RENDER=always on the first 100 pages (2 browser pages at once); RENDER=never and RENDER=auto on the whole manual, alternated twice, the faster run of each kept (a shared machine is noisy)",
    run: () => {
      const always = script("e2e.ts", "embedded", "pg", "always", "100")();
      const runs: Record<string, Record<string, unknown>[]> = { never: [], auto: [] };
      for (let i = 0; i < 2; i++) for (const mode of ["never", "auto"]) runs[mode]?.push(script("e2e.ts", "embedded", "pg", mode)());
      const best = (list: Record<string, unknown>[] = []) => ({ ...list.reduce((a, b) => (Number(b.pagesPerSecond) > Number(a.pagesPerSecond) ? b : a)), runsPagesPerSecond: list.map((r) => r.pagesPerSecond) });
      return { always, auto: best(runs.auto), never: best(runs.never) };
    },
    summary: (r) => {
      const [always, auto, never] = (["always", "auto", "never"] as const).map((k) => r[k] as Record<string, number>) as Record<string, number>[];
      return `always: ${always?.pages} pages, ${always?.pagesPerSecond} pages/s, ${always?.cpuSecondsPerPage} CPU s/page, browser peak RSS ${always?.browserPeakRssMB} MB (PSS ${always?.browserPeakPssMB}; without its pages ${always?.browserBasePeakRssMB}); ` +
        `per page, measured (one renderer process each, /proc): peak RSS ${always?.pagePeakRssMB} MB, peak PSS ${always?.pagePeakPssMB} MB, mean RSS ${always?.pageMeanRssMB} MB<br>` +
        `auto: ${auto?.pages} pages, ${auto?.pagesPerSecond} pages/s, ${auto?.cpuSecondsPerPage} CPU s/page<br>never: ${never?.pages} pages, ${never?.pagesPerSecond} pages/s, ${never?.cpuSecondsPerPage} CPU s/page`;
    },
    targets: (r) => {
      const auto = Number((r.auto as Record<string, number>).pagesPerSecond);
      const never = Number((r.never as Record<string, number>).pagesPerSecond);
      return [met(auto >= never * 0.9, `RENDER=auto within 10% of static (${auto} vs ${never} pages/s)`)];
    },
  },
  auth: {
    describe: "GET /v2/crawl/:id latency with USE_DB_AUTHENTICATION on vs off (embedded, 2,000 sequential reads)",
    run: script("auth.ts"),
    targets: (r) => [met(Number(r.addedP50Ms) < 1, `the key check adds < 1 ms at p50 (${r.addedP50Ms} ms)`)],
  },
  warc: {
    describe: "web archives (issue 47): the embedded crawl of the manual without and with WARC_DEFAULT=true, interleaved for BENCH_ROUNDS rounds: pages/s, CPU ms/page, WARC bytes written per page",
    run: script("warc.ts"),
    summary: (r) => `${r.pagesPerSecondWithout} -> ${r.pagesPerSecondWith} pages/s (${r.ratio}), CPU ${r.cpuMsPerPageWithout} -> ${r.cpuMsPerPageWith} ms/page, ${r.warcBytesPerPage} WARC bytes/page`,
    targets: (r) => [met(Number(r.ratio) >= 0.85, `pages/s with warc >= 85 % of without (${Math.round(Number(r.ratio) * 100)} %)`)],
  },
  "auth-flood": {
    describe: "GET /v2/crawl/active with a valid key 20 times a second, quiet then while 25 wrong keys a second arrive, each from another of 253 loopback addresses (embedded, USE_DB_AUTHENTICATION; `node bench/auth-flood.ts` for other cases and a base checkout)",
    run: script("auth-flood.ts", "many", "15"),
    summary: (r) => {
      const q = r.validQuiet as Record<string, number>;
      const f = r.validDuringFlood as Record<string, number>;
      return `valid p50/p99 quiet ${q.p50Ms}/${q.p99Ms} ms, during the flood ${f.p50Ms}/${f.p99Ms} ms (max ${f.maxMs}); flood answered ${JSON.stringify((r.flood as Record<string, unknown>).statuses)}`;
    },
    targets: (r) => {
      const f = r.validDuringFlood as { p99Ms: number; notOk: number };
      return [met(f.p99Ms < 100 && f.notOk === 0, `valid requests during the flood: p99 < 100 ms, all 200 (${f.p99Ms} ms, ${f.notOk} not 200)`)];
    },
  },
  scale100k: {
    describe: "embedded mode, synthetic site of 100,000 pages (about 2 minutes here): pages/s, RSS at 10/50/100 %, status p99 with the documents stored",
    run: script("e2e.ts", "embedded", "synthetic:100000"),
    targets: (r) => [...rssFlat(r), met(Number(r.statusP99Ms) < 50, "status p99 < 50 ms with 100,000 documents")],
  },
  "scale100k-cluster": {
    describe: "cluster mode (every role in one process, on its own Kafka + ClickHouse), synthetic site of 100,000 pages (about 3 minutes here): pages/s, RSS of each process at 10/50/100 %",
    run: script("e2e.ts", "cluster", "synthetic:100000"),
    targets: (r) => rssFlat(r),
  },
  "scale1m-embedded": {
    describe: `issue 48: embedded mode, ${scalePages.toLocaleString("en")} pages over ${scaleHosts.toLocaleString("en")} hosts (BENCH_SCALE_PAGES, BENCH_SCALE_HOSTS), one start page linking every host, allowSubdomains, defaults, 200 status readers: pages/s, CPU and RSS per tenth, paging at the end`,
    run: scaleRun("embedded"),
    summary: scaleSummary,
    targets: scaleTargets,
    file: scaleFile("-embedded"),
  },
  "scale1m-cluster": {
    describe: `issue 48: cluster mode (every role in one process, on its own Kafka + ClickHouse), ${scalePages.toLocaleString("en")} pages over ${scaleHosts.toLocaleString("en")} hosts, as scale1m-embedded`,
    run: scaleRun("cluster"),
    summary: scaleSummary,
    targets: scaleTargets,
    file: scaleFile("-cluster"),
  },
  scale1m: {
    describe: `issue 48: scale1m-embedded then scale1m-cluster (${scalePages.toLocaleString("en")} pages over ${scaleHosts.toLocaleString("en")} hosts)`,
    run: () => {
      const embedded = scaleRun("embedded")();
      settle();
      return { embedded, cluster: scaleRun("cluster")() };
    },
    summary: (r) => [scaleSummary(r.embedded as Record<string, unknown>), scaleSummary(r.cluster as Record<string, unknown>)].join("<br>"),
    targets: (r) => [...scaleTargets(r.embedded as Record<string, unknown>), ...scaleTargets(r.cluster as Record<string, unknown>)],
    file: scaleFile(""),
  },
  "kafka-bytes": {
    describe: "bytes each page puts through Kafka, per topic, before compression (key + value of every record, read back with kcat), against the stored document: cluster crawls of 300 pages of the PostgreSQL manual on the Kafka and ClickHouse of KAFKA_BROKERS / CLICKHOUSE_URL (a topic prefix and database of their own), one with no webhook and one whose webhook takes every event; KAFKA_BYTES_ENV=A=1,B=2: Trawl's settings for the run (e.g. CRAWL_EVENTS_DOCUMENT=false)",
    run: scriptWith({}, "kafka-bytes.ts", "pg", "300"),
    summary: (r) => (["plain", "webhook"] as const).map((k) => {
      const x = r[k] as { pages: number; docBytesPerPage: number; kafkaBytesPerPage: number; kafkaPerDocument: number; kafkaOnDiskBytesPerPage?: number; topics: Record<string, { bytesPerPage: number }> };
      const topics = Object.entries(x.topics).map(([t, b]) => `${t} ${b.bytesPerPage}`).join(", ");
      const disk = x.kafkaOnDiskBytesPerPage === undefined ? "" : `; on the broker's disk ${x.kafkaOnDiskBytesPerPage} B/page`;
      return `${k === "plain" ? "no webhook" : "webhook, every event"}: ${x.pages} pages, document ${x.docBytesPerPage} B, Kafka ${x.kafkaBytesPerPage} B/page = ${x.kafkaPerDocument}x (${topics})${disk}`;
    }).join("<br>"),
    targets: (r) => [met(Number((r.plain as Record<string, unknown>).kafkaPerDocument) <= 2, `issue 46 goal: bytes through Kafka per page <= 2x the stored document (${(r.plain as Record<string, unknown>).kafkaPerDocument}x)`)],
  },
  "replica-churn": {
    describe: "issue 46 item 4 (not in the default set): a fetch-render replica joining and leaving a running cluster crawl, consumer group protocol (KIP-848) then classic, on the Kafka and ClickHouse of KAFKA_BROKERS / CLICKHOUSE_URL: every role its own process, two fetch-render replicas on a 40-host synthetic web (each page 100 ms late, 4 fetches at once per replica); +15 s a third joins, +30 s SIGTERM of one, +45 s kill -9 of another: stored and fetched pages/s around each event, the longest stretch below half the median, each partition's longest gap, pages fetched twice (`node bench/replica-churn.ts consumer|classic`)",
    run: scriptWith({ BENCH_FROM_RUNNER: "1" }, "replica-churn.ts", "both"),
    summary: (r) => (["consumer", "classic"] as const).map((p) => {
      const x = r[p] as { medianPagesPerSecondBeforeEvents: number; pagesFetchedTwice: number; loadAverageAtStart: string; events: { event: string; longestBelowHalfMedianS: number; fetchLongestBelowHalfMedianS: number; partitionsPaused: number; partitionsTheEventMustMove: number }[] };
      const events = x.events.map((e) => `${e.event}: stored ${e.longestBelowHalfMedianS} s / fetched ${e.fetchLongestBelowHalfMedianS} s below half, ${e.partitionsPaused} partitions paused (must move ${e.partitionsTheEventMustMove})`).join("; ");
      return `${p}: median ${x.medianPagesPerSecondBeforeEvents} pages/s; ${events}; ${x.pagesFetchedTwice} pages fetched twice (load ${x.loadAverageAtStart})`;
    }).join("<br>"),
    targets: (r) => (["consumer", "classic"] as const).flatMap((p) => {
      const x = r[p] as { pagesFetchedTwice: number; events: { event: string; partitionsPaused: number; partitionsTheEventMustMove: number }[] };
      return [
        met(x.events.every((e) => e.partitionsPaused <= e.partitionsTheEventMustMove), `${p}: no event pauses more partitions than it must move (${x.events.map((e) => `${e.partitionsPaused}/${e.partitionsTheEventMustMove}`).join(", ")})`),
        met(x.pagesFetchedTwice === 0, `${p}: no page fetched twice (${x.pagesFetchedTwice})`),
      ];
    }),
  },
  "map-search": {
    describe: "POST /v2/map on the PostgreSQL manual's ~1,170-URL sitemap; search index: ClickHouse query + BM25 vs embedded scan vs in-memory index, 10,000 docs",
    run: script("map-search.ts"),
    targets: (r) => {
      const map = r.map as { listAfterSitemapMedianMs: number; sitemapOnly: { medianMs: number } };
      return [met(map.listAfterSitemapMedianMs < 100, `list after the sitemap < 100 ms (${map.listAfterSitemapMedianMs} ms)`), met(map.sitemapOnly.medianMs < 1000, `whole map (sitemap only) < 1 s (${map.sitemapOnly.medianMs} ms)`)];
    },
  },
};

// --from=<date>: the table again from the results saved that day (targets re-evaluated, nothing run or rewritten)
const fromDate = process.argv.find((a) => a.startsWith("--from="))?.slice("--from=".length);
const names = process.argv.slice(2).filter((a) => !a.startsWith("--from="));
const wanted = names.length ? names : ["frontier", "convert", "peer", "polite", "embedded", "cluster", "goals", "status", "scale10k", "scale100k", "scale100k-cluster"];
// BENCH_COMMIT: the commit measured, when the bench runs from an export of it (`git archive`) rather than a checkout
const commit = (() => {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
})();
const date = new Date().toISOString().slice(0, 10);
mkdirSync(join(here, "results"), { recursive: true });
journaledScratch();
const results: Record<string, Record<string, unknown>> = {};
const rows: string[] = [];
for (const name of wanted) {
  const b = benches[name];
  if (!b) throw new Error(`unknown benchmark ${name}; known: ${Object.keys(benches).join(", ")}`);
  const file = b.file ?? name;
  const saved = fromDate ? (JSON.parse(readFileSync(join(here, "results", `${fromDate}-${file}.json`), "utf8")) as { result: Record<string, unknown> }) : null;
  const settled = saved ? null : settle();
  const result = saved ? saved.result : b.run();
  results[name] = result;
  const targets = b.targets?.(result, results) ?? [];
  const record = { name, describe: b.describe, date: new Date().toISOString(), commit, cores: cpus().length, node: process.version, settled, result, targets };
  if (!saved) writeFileSync(join(here, "results", `${date}-${file}.json`), JSON.stringify(record, null, 2) + "\n");
  const flat = b.summary?.(result) ?? Object.entries(result).map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
  rows.push(`| ${name} | ${b.describe} | ${flat} | ${targets.join("; ")} |`);
  console.error(`done: ${name}`);
}
console.log(["| bench | what | result | targets |", "|---|---|---|---|", ...rows].join("\n"));
