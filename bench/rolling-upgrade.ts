// A rolling upgrade under a running crawl (issue 46 item 2): the roles of an older release (another checkout, e.g.
// 01073fa, the last on kafkajs: `scripts/rolling-upgrade.sh` makes it) run a cluster on the Kafka and ClickHouse of
// KAFKA_BROKERS / CLICKHOUSE_URL (a topic prefix, group prefix and database of their own), two replicas of each scaled
// role, each its own process; a crawl of a local synthetic web starts on them. Once 30 % of its pages are stored, the
// old processes are stopped one by one with SIGTERM, each replaced at once by this checkout's (waiting until the new
// one's consumers run), so each group holds an old and a new member for a while; past 60 % of the pages the site
// answers slowly until every process is new. Then the crawl must end `completed` with every page exactly once: the documents table's
// rows == distinct URL keys == the site's pages, status completed == total == creditsUsed == pages, each page served
// once by the site. Printed: the checks, the site's repeated fetches, and every warning or error line of every process
// by message (a disagreement on topics, keys, formats, groups or offsets shows there: a dead letter, a schema failure).
// usage: node bench/rolling-upgrade.ts <old checkout>   env: ROLLING_PAGES (3000), ROLLING_HOSTS (30),
//        ROLLING_ORDER (api,frontier,fetch-render,convert,sink: the order of the roles replaced), ROLLING_DELAY_MS (100),
//        ROLLING_NEW_ENV ("A=1,B=2": settings of the new release's processes only, e.g. KAFKA_GROUP_PROTOCOL=classic)
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { raw, sql } from "../pipeline/store/sql.ts";
import { crawlStatus, until } from "../test/integration/crawl-progress.ts";
import { postJson } from "../test/integration/harness.ts";
import { freePort } from "../test/integration/own-infra.ts";
import { isolatedCluster, RoleProcesses, type RoleProcess } from "../test/integration/role-processes.ts";
import { startManyHostSite } from "./synthetic-site.ts";

const env = process.env;
const oldCheckout = process.argv[2];
if (!oldCheckout || !existsSync(join(oldCheckout, "bin", "trawl.js"))) throw new Error("usage: node bench/rolling-upgrade.ts <checkout of the old release, with its node_modules>");
const PAGES = Number(env.ROLLING_PAGES ?? 3000);
const HOSTS = Number(env.ROLLING_HOSTS ?? 30);
const DELAY_MS = Number(env.ROLLING_DELAY_MS ?? 100);
const ORDER = (env.ROLLING_ORDER ?? "api,frontier,fetch-render,convert,sink").split(",");
const SCALED = ["frontier", "fetch-render", "convert", "sink"];
const shared = loadConfig(env);
const loadavg = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const tag = `upg${randomBytes(3).toString("hex")}`;
const database = `trawl_${tag}`;
const t0 = Date.now();
const mark = (what: string) => console.error(`[rolling-upgrade] ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what} (load ${loadavg()})`);

// the site: every page request counted; past 60 % of the pages and until the upgrade is over, each page is answered
// 2 s late (not held: a replica stopped meanwhile finishes its fetches in flight), so the crawl outlasts the upgrade
const served = new Map<string, number>();
const others = new Map<string, number>();
let upgraded = false;
const site = await startManyHostSite(PAGES, HOSTS, {
  delayMs: DELAY_MS,
  onRequest: (host, path) => {
    if (!path.startsWith("/site/")) return;
    const key = `h${host}${path}`;
    const page = /^\/site\/p(\d+)\.html$/.exec(path);
    if (host < 0 || !page || Number(page[1]) >= PAGES / HOSTS) {
      others.set(key, (others.get(key) ?? 0) + 1); // not one of the site's pages: a 404
      return;
    }
    served.set(key, (served.get(key) ?? 0) + 1);
    if (!upgraded && served.size > PAGES * 0.6) return new Promise((r) => setTimeout(r, 2000));
  },
});
const port = await freePort();
const api = `http://127.0.0.1:${port}`;
const logDir = mkdtempSync(join(tmpdir(), "trawl-rolling-upgrade-logs-"));
const common = {
  ...isolatedCluster(tag, shared.kafkaBrokers, shared.clickhouseUrl),
  KAFKA_PARTITIONS: "4",
  SCHEMA_REGISTRY_URL: "",
  ALLOW_PRIVATE_CRAWL_TARGETS: "true",
  RESOLVE: site.resolve,
  PORT: String(port),
  // info: each process says when its consumers run (the replacement waits for it)
  LOG_LEVEL: "info",
  FETCH_CONCURRENCY: "4",
  MAX_CPU: "1",
  MAX_RAM: "1",
};
// (a directory each: the two name their log files alike)
for (const d of ["old", "new"]) mkdirSync(join(logDir, d));
const old = new RoleProcesses(common, join(logDir, "old"), join(oldCheckout, "bin", "trawl.js"));
// ROLLING_NEW_ENV="A=1,B=2": settings of the new release's processes only (e.g. KAFKA_GROUP_PROTOCOL=classic)
const newEnv = Object.fromEntries((env.ROLLING_NEW_ENV ?? "").split(",").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const now = new RoleProcesses({ ...common, ...newEnv }, join(logDir, "new"));
const ch = new ClickHouseClient({ url: shared.clickhouseUrl, user: shared.clickhouseUser, password: shared.clickhousePassword, database, caFile: shared.clickhouseCaFile });
const logs = () => `${old.logs()}\n${now.logs()}`;
const read = (p: RoleProcess) => (existsSync(p.log) ? readFileSync(p.log, "utf8") : "");

let report: Record<string, unknown> = {};
let ok = false;
try {
  old.spawn("api");
  for (const role of SCALED) for (const i of [0, 1]) old.spawn(role, i);
  await until("the old release's API to be ready", 300_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200, logs);
  mark(`the old release (${oldCheckout}) runs: api and two replicas of ${SCALED.join(", ")}`);
  const res = await postJson(`${api}/v2/crawl`, { url: site.start, limit: PAGES, crawlEntireDomain: true, allowSubdomains: true });
  if (res.status !== 200) throw new Error(`POST /v2/crawl -> ${res.status} ${JSON.stringify(res.body)}`);
  const id = res.body.id as string;
  let last: { status?: string; completed?: number; total?: number; creditsUsed?: number } | undefined;
  const completed = async () => {
    last = (await crawlStatus(api, id)) ?? last;
    return Number(last?.completed ?? 0);
  };
  await until("30 % of the pages stored", 600_000, async () => (await completed()) >= PAGES * 0.3, logs);
  mark(`30 % stored (${last?.completed} of ${PAGES}): the upgrade starts`);

  const steps: { process: string; stoppedAtPages: number; newRunningAfterS: number }[] = [];
  for (const role of ORDER) {
    for (const i of role === "api" ? [0] : [0, 1]) {
      const name = `${role}-${i}`;
      const atPages = await completed();
      await old.stop(name);
      const started = Date.now();
      const p = now.spawn(role, i);
      if (role === "api") await until("the new API to be ready", 300_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200, logs);
      else await until(`the new ${name}'s consumers to run`, 300_000, async () => read(p).includes("consumer running"), logs);
      steps.push({ process: name, stoppedAtPages: atPages, newRunningAfterS: +((Date.now() - started) / 1000).toFixed(1) });
      mark(`${name}: old stopped at ${atPages} pages, new running`);
    }
  }
  upgraded = true;
  const storedWhenUpgraded = await completed();
  mark(`every process is the new release's (${storedWhenUpgraded} pages stored); the site answers at full speed again`);
  await until("the crawl to end", 900_000, async () => {
    await completed();
    return !!last && last.status !== "scraping";
  }, logs);
  const status = last ?? {};
  mark(`the crawl ended: ${status.status}`);

  const rows = await ch.query<{ rows: number; keys: number; seqs: number }>(
    sql`SELECT count() AS rows, uniqExact(url_key) AS keys, uniqExact(seq) AS seqs FROM ${raw(ch.table("documents"))} WHERE crawl_id = ${id}`,
  );
  const repeated = [...served].filter(([, n]) => n > 1);
  // every warning and error line of every process, by its message
  const problems: Record<string, number> = {};
  for (const p of [...old.all, ...now.all]) {
    for (const line of read(p).split("\n")) {
      if (!line.startsWith("{")) continue;
      try {
        const l = JSON.parse(line) as { level: number; msg?: string };
        if (l.level >= 40) problems[`${p.name} (${old.all.includes(p) ? "old" : "new"}): ${l.msg}`] = (problems[`${p.name} (${old.all.includes(p) ? "old" : "new"}): ${l.msg}`] ?? 0) + 1;
      } catch {
        continue; // not a log record
      }
    }
  }
  const checks = {
    statusCompleted: status.status === "completed",
    completedEqualsPages: Number(status.completed) === PAGES,
    totalEqualsPages: Number(status.total) === PAGES,
    creditsEqualPages: Number(status.creditsUsed) === PAGES,
    documentRowsEqualPages: Number(rows[0]?.rows) === PAGES,
    distinctUrlKeysEqualPages: Number(rows[0]?.keys) === PAGES,
    distinctSeqsEqualPages: Number(rows[0]?.seqs) === PAGES,
    siteServedEveryPage: served.size === PAGES,
    noPageFetchedTwice: repeated.length === 0,
    noProcessCrashed: old.crashed().length + now.crashed().length === 0,
  };
  ok = Object.values(checks).every(Boolean);
  report = {
    oldCheckout, pages: PAGES, hosts: HOSTS, order: ORDER, tag, newEnv,
    // the group protocol each new process's consumers joined with
    newProtocols: [...new Set(now.all.flatMap((p) => [...read(p).matchAll(/"protocol":"(\w+)","msg":"consumer running"/g)].map((m) => `${p.name}: ${m[1]}`)))],
    status: { status: status.status, completed: status.completed, total: status.total, creditsUsed: status.creditsUsed },
    documents: rows[0],
    siteDistinctPages: served.size,
    otherPathsRequested: Object.fromEntries([...others].slice(0, 20)),
    pagesFetchedTwice: repeated.length,
    examplesFetchedTwice: repeated.slice(0, 10).map(([k, n]) => `${k} x${n}`),
    steps,
    storedWhenUpgraded,
    checks,
    crashed: [...old.crashed(), ...now.crashed()].map((c) => c.split("\n").slice(0, 6).join("\n")),
    warningsAndErrors: problems,
    loadAverageAtEnd: loadavg(),
    logDir,
  };
} catch (err) {
  report = { ...report, newEnv, failed: String(err).slice(0, 4000), logDir };
} finally {
  await old.stopAll();
  await now.stopAll();
  await site.close();
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${database}`)).catch(() => undefined);
}
console.error(JSON.stringify(report, null, 2));
mkdirSync(join(import.meta.dirname, "results"), { recursive: true });
writeFileSync(join(import.meta.dirname, "results", `${new Date().toISOString().slice(0, 10)}-rolling-upgrade.json`), JSON.stringify({ date: new Date().toISOString(), ok, ...report }, null, 2) + "\n");
console.log(JSON.stringify({ ok, ...report }));
process.exit(ok ? 0 : 1);
