// Fault run, cluster mode: every role is its own process (two replicas of frontier, fetch-render, convert and sink)
// on a private Kafka and ClickHouse. Mid-crawl, one replica of each is killed with SIGKILL (and started again, as an
// orchestrator would), then the Kafka broker is restarted, then ClickHouse. Two crawls of a 311-page site must end
// `completed` with exactly the site's pages, no page stored twice (in the API's answer or in the documents table)
// and credits exact.
import { mkdtempSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { startManyPagesSite, type ManyPagesSite } from "../fixtures/many-pages-site.ts";
import { postJson } from "./harness.ts";
import { freePort, startOwnInfra, type OwnInfra } from "./own-infra.ts";
import { RoleProcesses } from "./role-processes.ts";
import { crawlProgress as progress, expectExactlyOnce, until as waitUntil } from "./crawl-progress.ts";

const SCALED = ["frontier", "fetch-render", "convert", "sink"] as const;
const CRAWLS = 2;

let infra: OwnInfra | undefined;
let site: ManyPagesSite | undefined;
let procs: RoleProcesses | undefined;
afterAll(async () => {
  await procs?.stopAll();
  await site?.close();
  await infra?.stop();
}, 120_000);

const until = (what: string, deadlineMs: number, check: () => Promise<boolean>) => waitUntil(what, deadlineMs, check, () => procs?.logs() ?? "");

it("completes exactly, once, after kill -9 of a replica of each stage, a Kafka restart and a ClickHouse restart", async () => {
  const t0 = Date.now();
  const mark = (what: string) => console.log(`[faults] ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);
  [infra, site] = await Promise.all([startOwnInfra(), startManyPagesSite({ sections: 10, pagesPerSection: 30, delayMs: 120 })]);
  mark("own Kafka and ClickHouse up");
  const tag = `f${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  procs = new RoleProcesses({
    TRAWL_MODE: "cluster",
    KAFKA_BROKERS: infra.kafkaBrokers,
    CLICKHOUSE_URL: infra.clickhouseUrl,
    CLICKHOUSE_DATABASE: `trawl_${tag}`,
    KAFKA_TOPIC_PREFIX: `${tag}.`,
    KAFKA_GROUP_PREFIX: `${tag}.`,
    KAFKA_PARTITIONS: "4",
    // a killed replica's partitions move to the other one after this long
    KAFKA_SESSION_TIMEOUT_MS: "8000",
    SCHEMA_REGISTRY_URL: "",
    ALLOW_PRIVATE_CRAWL_TARGETS: "true",
    PORT: String(port),
    LOG_LEVEL: "warn",
    FETCH_CONCURRENCY: "4",
    FETCH_RETRIES: "1",
    MAX_CPU: "1",
    MAX_RAM: "1",
  }, mkdtempSync(join(tmpdir(), "trawl-faults-logs-")));
  procs.spawn("api");
  procs.spawn("webhook-emit");
  for (const role of SCALED) for (const i of [0, 1]) procs.spawn(role, i);
  await until("the API to be ready", 180_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200);
  mark("every role started");

  const ids: string[] = [];
  for (let c = 0; c < CRAWLS; c++) {
    const res = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/`, limit: 10_000 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(res.body.id);
  }
  const expected = site.paths.length * CRAWLS;
  /** Holds the site's answers once `fraction` of the pages were served (so the crawls are surely mid-way), injects the
   * fault while the fetches wait, and lets them go on into the fault. */
  const fault = async (fraction: number, what: string, inject: (release: () => void) => Promise<void>) => {
    let reached = false;
    void site?.holdAt(Math.round(expected * fraction)).then(() => (reached = true));
    await until(`${fraction * 100} % of the pages`, 180_000, async () => {
      if (reached) return true;
      if ((await progress(api, ids)).scraping === 0) throw new Error(`the crawls ended before the fault "${what}"\n${procs?.logs()}`);
      return false;
    });
    mark(`${what} (${(await progress(api, ids)).completed} of ${expected} pages done)`);
    await inject(() => site?.release());
    site?.release();
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  await fault(0.15, `kill -9 one replica of ${SCALED.join(", ")}`, async (release) => {
    for (const role of SCALED) await procs?.kill9(`${role}-0`);
    release();
    await sleep(1500);
    for (const role of SCALED) procs?.spawn(role, 0);
  });
  await fault(0.5, "Kafka broker restart", async (release) => {
    await infra?.down("kafka");
    release();
    await sleep(2000);
    await infra?.up("kafka");
  });
  mark("Kafka back");
  await fault(0.75, "ClickHouse restart", async (release) => {
    await infra?.down("clickhouse");
    release();
    await sleep(2000);
    await infra?.up("clickhouse");
  });
  mark("ClickHouse back");

  await until("the crawls to end", 180_000, async () => (await progress(api, ids)).scraping === 0);
  mark("crawls ended");
  expect(procs.crashed()).toEqual([]);

  const ch = new ClickHouseClient({ url: infra.clickhouseUrl, user: "default", password: "", database: `trawl_${tag}` });
  for (const id of ids) await expectExactlyOnce(api, id, site.paths, ch, () => procs?.logs() ?? "");
  const refetched = [...site.hits].filter(([, n]) => n > CRAWLS).length;
  const restarted = procs.count("consumer running again after a crash");
  const forgotten = procs.count("of partitions moved away forgotten");
  mark(`${expected} pages stored once; ${refetched} paths fetched more than once per crawl (at-least-once after the kills); ` +
    `${restarted} consumers started again after a non-retriable crash; ${forgotten} caches dropped for partitions that moved away`);
}, 900_000);
