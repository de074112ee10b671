// What a fetch-render replica joining or leaving a running crawl costs (issue 46 item 4), under the consumer group
// protocol (KIP-848, Kafka >= 4.0) and the classic one: cluster mode, every role its own process (as
// test/integration/broker-loss.test.ts runs them) on the Kafka and ClickHouse of KAFKA_BROKERS / CLICKHOUSE_URL (a topic
// prefix, group prefix and database of its own, dropped after), two fetch-render replicas crawling a synthetic web of
// many hosts (fetch.tasks is keyed by host: one host would be one partition, one replica). Counted from the first stored
// page: at +15 s a third fetch-render starts, at +30 s one is stopped with SIGTERM, at +45 s another is killed with
// SIGKILL; at +65 s the crawl is cancelled. Printed for each event: stored pages per second around it (the API's
// `completed`, sampled every 200 ms), the longest run of seconds below half the median rate of the 10 s before the
// first event, the longest time without a stored page, and for each partition of fetch.tasks the longest time without
// a request to one of its hosts (the site sees every fetch: a partition the event does not move should not pause); at
// the end, the pages the site served more than once ("fetched twice").
// The site answers each page 100 ms late and each replica fetches 4 pages at once, so that fetching, not the shared
// CPU, sets the rate (a backlog in pages.fetched would hide a fetcher's pause from the stored count).
// usage: node bench/replica-churn.ts [consumer|classic|both]   (default both, one after the other)
// env: BENCH_CHURN_PAGES (40000), BENCH_CHURN_HOSTS (40), BENCH_CHURN_DELAY_MS (100), BENCH_CHURN_FETCH_CONCURRENCY (4),
//      BENCH_CHURN_PARTITIONS (6), BENCH_CHURN_EVENTS_S ("15,30,45"), BENCH_CHURN_END_S (65)
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { javaPartition } from "../pipeline/runtime/java-partitioner.ts";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { raw } from "../pipeline/store/sql.ts";
import { crawlStatus, until } from "../test/integration/crawl-progress.ts";
import { postJson } from "../test/integration/harness.ts";
import { freePort } from "../test/integration/own-infra.ts";
import { isolatedCluster, RoleProcesses } from "../test/integration/role-processes.ts";
import { longestGap, longestRunBelow, median, perSecond } from "./rate-series.ts";
import { manyHostName, startManyHostSite } from "./synthetic-site.ts";

const env = process.env;
const PAGES = Number(env.BENCH_CHURN_PAGES ?? 40_000);
const HOSTS = Number(env.BENCH_CHURN_HOSTS ?? 40);
const DELAY_MS = Number(env.BENCH_CHURN_DELAY_MS ?? 100);
const FETCH_CONCURRENCY = env.BENCH_CHURN_FETCH_CONCURRENCY ?? "4";
const PARTITIONS = Number(env.BENCH_CHURN_PARTITIONS ?? 6);
const EVENTS_S = (env.BENCH_CHURN_EVENTS_S ?? "15,30,45").split(",").map(Number);
const END_S = Number(env.BENCH_CHURN_END_S ?? 65);
const shared = loadConfig(env);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Event {
  what: string;
  /** the fewest partitions of fetch.tasks the event must move (an even spread before and after) */
  mustMove: number;
  act: (procs: RoleProcesses) => Promise<void>;
}

// LOG_LEVEL info for the fetchers: each replica's "consumer running" line names the group protocol it joined with
const FETCHER_ENV = { LOG_LEVEL: "info" };
const EVENTS: Event[] = [
  { what: "third fetch-render joins", mustMove: Math.floor(PARTITIONS / 3), act: async (p) => void p.spawn("fetch-render", 2, FETCHER_ENV) },
  { what: "SIGTERM of fetch-render-0", mustMove: Math.ceil(PARTITIONS / 3), act: (p) => p.stop("fetch-render-0") },
  { what: "kill -9 of fetch-render-1", mustMove: Math.ceil(PARTITIONS / 2), act: (p) => p.kill9("fetch-render-1") },
];

async function churn(protocol: "consumer" | "classic"): Promise<Record<string, unknown>> {
  const tag = `churn${randomBytes(3).toString("hex")}`;
  const database = `trawl_${tag}`;
  const requests = new Map<string, number>(); // host/path -> requests
  const hostTimes: number[][] = Array.from({ length: HOSTS }, () => []); // page requests to each host, ms
  const repeatedAt: number[] = []; // when a page was asked again
  const site = await startManyHostSite(PAGES, HOSTS, {
    delayMs: DELAY_MS,
    onRequest: (host, path) => {
      const key = `${host}${path}`;
      const n = (requests.get(key) ?? 0) + 1;
      requests.set(key, n);
      if (host >= 0 && path.startsWith("/site/")) {
        hostTimes[host]?.push(Date.now());
        if (n > 1) repeatedAt.push(Date.now());
      }
    },
  });
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const logDir = mkdtempSync(join(tmpdir(), "trawl-churn-logs-"));
  const procs = new RoleProcesses({
    ...isolatedCluster(tag, shared.kafkaBrokers, shared.clickhouseUrl),
    KAFKA_PARTITIONS: String(PARTITIONS),
    KAFKA_GROUP_PROTOCOL: protocol,
    SCHEMA_REGISTRY_URL: "",
    ALLOW_PRIVATE_CRAWL_TARGETS: "true",
    RESOLVE: site.resolve,
    PORT: String(port),
    LOG_LEVEL: "warn",
    FETCH_CONCURRENCY,
    // the load guard would hold pages for the other engineers' load: the rate is the fetchers', not the machine's
    MAX_CPU: "1",
    MAX_RAM: "1",
  }, logDir);
  const ch = new ClickHouseClient({ url: shared.clickhouseUrl, user: shared.clickhouseUser, password: shared.clickhousePassword, database, caFile: shared.clickhouseCaFile });
  const t = Date.now();
  const mark = (what: string) => console.error(`[churn ${protocol}] ${((Date.now() - t) / 1000).toFixed(1)} s: ${what} (load ${loadavg()})`);
  try {
    procs.spawn("api");
    for (const role of ["frontier", "convert", "sink"]) procs.spawn(role);
    procs.spawn("fetch-render", 0, FETCHER_ENV);
    procs.spawn("fetch-render", 1, FETCHER_ENV);
    await until("the API to be ready", 240_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200, () => procs.logs());
    mark("every role started");
    const res = await postJson(`${api}/v2/crawl`, { url: site.start, limit: PAGES, crawlEntireDomain: true, allowSubdomains: true });
    if (res.status !== 200) throw new Error(`POST /v2/crawl -> ${res.status} ${JSON.stringify(res.body)}`);
    const id = res.body.id as string;
    const loadAtStart = loadavg();

    const samples: { at: number; value: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const s = await crawlStatus(api, id);
        if (s) samples.push({ at: Date.now(), value: Number(s.completed) });
        await sleep(200);
      }
    })();
    await until("the first stored page", 120_000, async () => (samples.at(-1)?.value ?? 0) > 0, () => procs.logs());
    const t0 = samples.find((s) => s.value > 0)!.at;
    mark("first page stored: t0");
    const at: number[] = [];
    for (const [i, event] of EVENTS.entries()) {
      await sleep(t0 + (EVENTS_S[i] as number) * 1000 - Date.now());
      at.push(Date.now());
      await event.act(procs);
      mark(`${event.what} (${samples.at(-1)?.value} pages)`);
    }
    await sleep(t0 + END_S * 1000 - Date.now());
    const loadAtEnd = loadavg();
    sampling = false;
    await sampler;
    const stored = samples.at(-1)?.value ?? 0;
    await fetch(`${api}/v2/crawl/${id}`, { method: "DELETE" });
    mark(`cancelled at ${stored} pages`);

    // what each fetch-render replica said it joined with
    const joined = procs.all.filter((p) => p.role === "fetch-render").map((p) => {
      const line = readFileSync(p.log, "utf8").split("\n").find((l) => l.includes("consumer running") && l.includes("fetch-render"));
      return `${p.name}: ${line ? (JSON.parse(line).protocol as string) : "?"}`;
    });

    const rates = perSecond(samples, t0, END_S);
    const baseline = median(rates.slice(Math.max(0, (EVENTS_S[0] as number) - 10), EVENTS_S[0]));
    // the site's view: pages fetched per second (smoother than the stored count, which the sink raises batch by batch)
    const fetchedCount = hostTimes.flat().sort((a, b) => a - b).map((at, i) => ({ at, value: i + 1 }));
    const fetchRates = perSecond(fetchedCount, t0, END_S);
    const fetchBaseline = median(fetchRates.slice(Math.max(0, (EVENTS_S[0] as number) - 10), EVENTS_S[0]));
    const rises = samples.filter((s, i) => i > 0 && s.value > (samples[i - 1] as { value: number }).value).map((s) => s.at);
    const partitionOfHost = Array.from({ length: HOSTS }, (_, k) => javaPartition(`${manyHostName(k)}:${new URL(site.start).port}`, PARTITIONS));
    const partitionTimes = Array.from({ length: PARTITIONS }, (_, p) => hostTimes.filter((_, k) => partitionOfHost[k] === p).flat().sort((a, b) => a - b));
    const gapsIn = (from: number, to: number) => partitionTimes.map((times) => +(longestGap(times, from, to) / 1000).toFixed(1));
    const before = gapsIn(t0 + Math.max(0, (EVENTS_S[0] as number) - 10) * 1000, at[0] as number);
    const events = EVENTS.map((e, i) => {
      const from = at[i] as number;
      const to = at[i + 1] ?? t0 + END_S * 1000;
      const s = Math.round((from - t0) / 1000);
      const window = rates.slice(s, Math.round((to - t0) / 1000));
      const fetchWindow = fetchRates.slice(s, Math.round((to - t0) / 1000));
      const partitionGapsS = gapsIn(from, to);
      // a partition paused: its longest gap over 2 s and over twice its longest gap of the 10 s before the first event
      const paused = partitionGapsS.filter((g, p) => g > 2 && g > 2 * (before[p] as number)).length;
      return {
        event: e.what,
        atS: +((from - t0) / 1000).toFixed(1),
        pagesPerSecondAround: rates.slice(Math.max(0, s - 3), s + 14),
        aroundFromS: Math.max(0, s - 3),
        longestBelowHalfMedianS: longestRunBelow(window, baseline / 2),
        longestWithoutStoredPageS: +(longestGap(rises, from, to) / 1000).toFixed(1),
        fetchedPerSecondAround: fetchRates.slice(Math.max(0, s - 3), s + 14),
        fetchLongestBelowHalfMedianS: longestRunBelow(fetchWindow, fetchBaseline / 2),
        pagesAskedAgainAfter: repeatedAt.filter((x) => x >= from && x < to).length,
        meanPagesPerSecondAfter: +(window.reduce((a, b) => a + b, 0) / Math.max(1, window.length)).toFixed(1),
        partitionGapsS,
        partitionsPaused: paused,
        partitionsTheEventMustMove: e.mustMove,
      };
    });
    const pageRepeats = [...requests].filter(([k, n]) => n > 1 && k.includes("/site/"));
    const otherRepeats = [...requests].filter(([k, n]) => n > 1 && !k.includes("/site/"));
    return {
      protocol,
      joined,
      pages: PAGES, hosts: HOSTS, partitions: PARTITIONS, siteDelayMs: DELAY_MS, fetchConcurrency: Number(FETCH_CONCURRENCY),
      loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAtEnd,
      storedAtEnd: stored,
      medianPagesPerSecondBeforeEvents: baseline,
      medianFetchedPerSecondBeforeEvents: fetchBaseline,
      pagesAskedAgainBeforeEvents: repeatedAt.filter((x) => x < (at[0] as number)).length,
      fetchedPerSecond: fetchRates,
      partitionGapsBeforeEventsS: before,
      pagesPerSecond: rates,
      events,
      pagesRequested: [...requests].filter(([k]) => k.includes("/site/")).length,
      pagesFetchedTwice: pageRepeats.length,
      pageRequestsRepeated: pageRepeats.reduce((n, [, c]) => n + c - 1, 0),
      examplesFetchedTwice: pageRepeats.slice(0, 10).map(([k, n]) => `h${k} x${n}`),
      // robots.txt: each replica reads a host's once when it first fetches there (a new owner of a partition: again)
      otherPathsRepeated: otherRepeats.reduce<Record<string, number>>((o, [k]) => ({ ...o, [k.replace(/^-?\d+/, "")]: (o[k.replace(/^-?\d+/, "")] ?? 0) + 1 }), {}),
      crashed: procs.crashed().map((c) => c.split("\n")[0]),
      logDir,
    };
  } finally {
    await procs.stopAll();
    await site.close();
    await ch.exec(raw(`DROP DATABASE IF EXISTS ${database}`)).catch(() => undefined);
  }
}

interface ChurnEvent {
  event: string; atS: number; aroundFromS: number; pagesPerSecondAround: number[]; longestBelowHalfMedianS: number; longestWithoutStoredPageS: number;
  fetchedPerSecondAround: number[]; fetchLongestBelowHalfMedianS: number; partitionGapsS: number[]; partitionsPaused: number; partitionsTheEventMustMove: number; pagesAskedAgainAfter: number;
}

function table(result: Record<string, unknown>): string {
  const r = result as { protocol: string; joined: string[]; events: ChurnEvent[]; medianPagesPerSecondBeforeEvents: number; medianFetchedPerSecondBeforeEvents: number; partitionGapsBeforeEventsS: number[]; storedAtEnd: number; pagesFetchedTwice: number; pageRequestsRepeated: number; otherPathsRepeated: Record<string, number>; loadAverageAtStart: string; loadAverageAtEnd: string };
  const rows = r.events.map((e) =>
    `| ${r.protocol} | ${e.event} (+${e.atS} s) | ${e.aroundFromS}..: ${e.pagesPerSecondAround.join(" ")} | ${e.longestBelowHalfMedianS} s | ${e.longestWithoutStoredPageS} s | ${e.fetchedPerSecondAround.join(" ")} | ${e.fetchLongestBelowHalfMedianS} s | ${e.partitionGapsS.join(" / ")} | ${e.partitionsPaused} (must move ${e.partitionsTheEventMustMove}) | ${e.pagesAskedAgainAfter} |`);
  return [
    `${r.protocol} (${r.joined.join(", ")}): median ${r.medianPagesPerSecondBeforeEvents} stored and ${r.medianFetchedPerSecondBeforeEvents} fetched pages/s in the 10 s before the first event, partitions' longest gaps then ${r.partitionGapsBeforeEventsS.join(" / ")} s; ` +
      `${r.storedAtEnd} pages stored; pages fetched twice ${r.pagesFetchedTwice} (${r.pageRequestsRepeated} repeated requests); other paths asked again ${JSON.stringify(r.otherPathsRepeated)}; load ${r.loadAverageAtStart} -> ${r.loadAverageAtEnd}`,
    "| protocol | event | stored pages/s from second N | stored: longest below half the median | longest without a stored page | fetched pages/s from second N | fetched: longest below half the median | each partition's longest gap in requests, s | partitions paused | pages asked again |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv[2] ?? "both";
  const protocols = which === "both" ? (["consumer", "classic"] as const) : [which as "consumer" | "classic"];
  if (!protocols.every((p) => p === "consumer" || p === "classic")) throw new Error(`usage: replica-churn.ts [consumer|classic|both]`);
  const out: Record<string, unknown> = {};
  for (const p of protocols) {
    const r = await churn(p);
    out[p] = r;
    console.error(table(r));
  }
  mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
  // run.ts writes its own record; a run by hand keeps its figures too
  if (!env.BENCH_FROM_RUNNER) writeFileSync(join(import.meta.dirname, "results", `${new Date().toISOString().slice(0, 10)}-replica-churn-${which}.json`), JSON.stringify(out, null, 2) + "\n");
  console.log(JSON.stringify(out));
}
