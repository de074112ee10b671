// Broker loss, cluster mode, as a data team runs Kafka: three KRaft brokers (replication factor 3, min.insync.replicas 2),
// two replicas of every role a crawl's pages go through, each its own process. Mid-crawl, the broker that leads the
// most partitions of Trawl's topics is killed with SIGKILL and started again (the brokers' preferred-leader election
// moves its leaders back), then another broker is stopped with SIGTERM (a controlled shutdown) and stays down. The
// crawl must end `completed` with exactly the site's pages, none stored twice, credits exact. Prints the stall: the
// longest time with no page completed after each fault.
import { mkdtempSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Admin } from "@platformatic/kafka";
import { afterAll, expect, it } from "vitest";
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";
import { startManyPagesSite, type ManyPagesSite } from "../fixtures/many-pages-site.ts";
import { crawlProgress, expectExactlyOnce, until as waitUntil } from "./crawl-progress.ts";
import { postJson } from "./harness.ts";
import { freePort, startOwnInfra, type OwnInfra } from "./own-infra.ts";
import { RoleProcesses } from "./role-processes.ts";

const SCALED = ["frontier", "fetch-render", "convert", "sink", "webhook-emit"] as const;
const shared = loadConfig(process.env);
const tag = `f${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
const ch = new ClickHouseClient({ url: shared.clickhouseUrl, user: shared.clickhouseUser, password: shared.clickhousePassword, database: `trawl_${tag}`, caFile: shared.clickhouseCaFile });

let infra: OwnInfra | undefined;
let site: ManyPagesSite | undefined;
let procs: RoleProcesses | undefined;
let admin: Admin | undefined;
afterAll(async () => {
  await procs?.stopAll();
  await admin?.close();
  await site?.close();
  await infra?.stop();
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
}, 240_000);

const until = (what: string, deadlineMs: number, check: () => Promise<boolean>) => waitUntil(what, deadlineMs, check, () => procs?.logs() ?? "");

/** Leader and replicas of every partition of Trawl's topics, asked again while the cluster answers with an error. */
async function partitions(a: Admin): Promise<{ leader: number; replicas: number[]; isr: number[] }[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const topics = (await a.listTopics()).filter((t) => t.startsWith(`${tag}.`));
      return [...(await a.metadata({ topics, forceUpdate: true })).topics.values()].flatMap((t) => t.partitions);
    } catch (err) {
      if (attempt >= 60) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The broker that leads the most of `parts`, of `among`. */
function busiest(parts: { leader: number }[], among: number[]): number {
  const led = (id: number) => parts.filter((p) => p.leader === id).length;
  return among.reduce((best, id) => (led(id) > led(best) ? id : best));
}

it("completes exactly, once, after kill -9 of the busiest broker, its restart and a SIGTERM of another", async () => {
  const t0 = Date.now();
  const secs = (t: number) => ((t - t0) / 1000).toFixed(1);
  const mark = (what: string) => console.log(`[broker-loss] ${secs(Date.now())} s (${new Date().toISOString().slice(11, 23)}): ${what}`);
  [infra, site] = await Promise.all([
    // the preferred-leader check every 5 s (default 300) so that the restarted broker's leaders move back within the test
    startOwnInfra({ services: ["kafka"], kafkaNodes: 3, kafkaPort: 19200, kafkaProps: { "leader.imbalance.check.interval.seconds": "5" } }),
    startManyPagesSite({ sections: 16, pagesPerSection: 50, delayMs: 300 }),
  ]);
  mark("three Kafka brokers up");
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  procs = new RoleProcesses({
    TRAWL_MODE: "cluster",
    KAFKA_BROKERS: infra.kafkaBrokers,
    KAFKA_REPLICATION_FACTOR: "3",
    KAFKA_MIN_INSYNC_REPLICAS: "2",
    CLICKHOUSE_URL: shared.clickhouseUrl,
    CLICKHOUSE_DATABASE: `trawl_${tag}`,
    KAFKA_TOPIC_PREFIX: `${tag}.`,
    KAFKA_GROUP_PREFIX: `${tag}.`,
    KAFKA_PARTITIONS: "4",
    SCHEMA_REGISTRY_URL: "",
    ALLOW_PRIVATE_CRAWL_TARGETS: "true",
    PORT: String(port),
    LOG_LEVEL: "warn",
    // one fetch-render replica holds the site's host: at most 4 pages at once, so the crawl lasts through the faults
    FETCH_CONCURRENCY: "8",
    HOST_MAX_CONCURRENCY: "4",
    HOST_MAX_CONCURRENCY_CEILING: "4",
    FETCH_RETRIES: "1",
    MAX_CPU: "1",
    MAX_RAM: "1",
  }, mkdtempSync(join(tmpdir(), "trawl-broker-loss-logs-")));
  procs.spawn("api");
  for (const role of SCALED) for (const i of [0, 1]) procs.spawn(role, i);
  await until("the API to be ready", 240_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200);
  mark("every role started");
  admin = createKafka(loadConfig({ KAFKA_BROKERS: infra.kafkaBrokers }), "broker-loss-test", createLogger("error")).admin();

  const res = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/`, limit: 10_000 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const ids = [res.body.id as string];
  const total = site.paths.length;
  // the crawl cannot end before the faults are over: the site holds its last pages until they are (on a quiet machine
  // the crawl never gets there; on a loaded one the stall after the last fault then includes the hold)
  let held = false;
  void site.holdAt(Math.round(total * 0.92)).then(() => (held = true));

  // every rise of the completed count, with its time: the stall is the longest time without one
  const rises: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    let last = 0;
    while (sampling) {
      const { completed } = await crawlProgress(api, ids);
      if (completed > last) rises.push(Date.now());
      last = Math.max(last, completed);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const faults: { what: string; at: number }[] = [];
  const fault = (what: string) => {
    faults.push({ what, at: Date.now() });
    mark(what);
  };
  const completed = async () => (await crawlProgress(api, ids)).completed;
  await until("15 % of the pages", 240_000, async () => (await completed()) >= total * 0.15);

  const brokers = [1, 2, 3];
  const victim = busiest(await partitions(admin), brokers);
  const preferred = (await partitions(admin)).filter((p) => p.replicas[0] === victim).length;
  fault(`kill -9 of broker ${victim}, leader of ${(await partitions(admin)).filter((p) => p.leader === victim).length} partitions (${await completed()} of ${total} pages done)`);
  await infra.kill9Kafka(victim);
  await until(`the leaders of broker ${victim} to move`, 120_000, async () => !(await partitions(admin!)).some((p) => p.leader === victim));
  mark(`its leaders moved to the other brokers (${await completed()} pages)`);
  await infra.up("kafka", victim);
  fault(`broker ${victim} restarted (${await completed()} pages)`);
  // (its leaders move back, a leader move of its own, inside the window of the restart)
  await until(`broker ${victim} to lead its ${preferred} preferred partitions again, every replica in sync`, 180_000, async () => {
    const parts = await partitions(admin!);
    return parts.filter((p) => p.leader === victim).length >= preferred && parts.every((p) => p.isr.length === 3);
  });
  mark(`preferred-leader election: broker ${victim} leads its partitions again (${await completed()} pages)`);
  // the crawl goes on again before the next fault, so that each stall is its own
  const resumedAt = await completed();
  await until("40 more pages", 240_000, async () => (await completed()) >= resumedAt + 40);
  const other = busiest(await partitions(admin), brokers.filter((b) => b !== victim));
  fault(`SIGTERM of broker ${other} (${await completed()} pages)`);
  await infra.down("kafka", other);
  mark(`broker ${other} stopped (${await completed()} pages); it stays down`);
  const heldBeforeRelease = held;
  site.release();

  await until("the crawl to end", 600_000, async () => (await crawlProgress(api, ids)).scraping === 0);
  mark("crawl ended");
  sampling = false;
  await sampler;
  expect(procs.crashed()).toEqual([]);
  await expectExactlyOnce(api, ids[0]!, site.paths, ch, () => procs?.logs() ?? "");

  // the stall after each fault: the longest time without a rise, from the fault until the next fault (or the end)
  const stall = (from: number, to: number) => {
    let longest = 0;
    for (let i = 1; i < rises.length; i++) if (rises[i]! > from && rises[i - 1]! < to) longest = Math.max(longest, rises[i]! - Math.max(rises[i - 1]!, from));
    return (longest / 1000).toFixed(1);
  };
  const end = rises.at(-1) ?? Date.now();
  const before = stall(rises[0] ?? t0, faults[0]!.at);
  const after = faults.map((f, i) => `${f.what.replace(/ \(.*\)$/, "")}: ${stall(f.at, faults[i + 1]?.at ?? end)} s`);
  const refetched = [...site.hits].filter(([, n]) => n > 1).length;
  mark(`${total} pages stored once; longest time without a completed page before the faults ${before} s; after ${after.join("; ")}` +
    `${heldBeforeRelease ? " (the site held its last pages before the SIGTERM: that stall includes the hold)" : ""}; ${refetched} pages fetched more than once`);
}, 900_000);
