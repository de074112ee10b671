// A ClickHouse replica that comes back empty is healed (issue 49): two ClickHouse 18.16 replicas of one shard with
// ZooKeeper (scripts/clickhouse.sh, TRAWL_CLICKHOUSE_REPLICAS=2) on private ports 19540-19571 (TRAWL_TEST_CH_HEAL_PORT
// moves them), Trawl in cluster mode in this process. Mid-crawl the replica of the first URL (the one in use) is
// killed with SIGKILL, its data directory removed (a replaced disk) and started again: the crawl ends exactly; Trawl
// applies its migrations to the empty replica (/health names it meanwhile), which fetches every part from the other;
// afterwards both replicas hold the same rows.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw, sql } from "../../pipeline/store/sql.ts";
import { startManyPagesSite, type ManyPagesSite } from "../fixtures/many-pages-site.ts";
import { allChunks, getJson, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { startOwnClickHouseCluster, type OwnClickHouseCluster } from "./own-infra.ts";

const BASE_PORT = Number(process.env.TRAWL_TEST_CH_HEAL_PORT ?? 19540); // ZooKeeper; replicas' HTTP +10-11, native +20-21, interserver +30-31

let cluster: OwnClickHouseCluster | undefined;
let site: ManyPagesSite | undefined;
let trawl: Instance | undefined;
beforeAll(async () => {
  cluster = await startOwnClickHouseCluster(BASE_PORT);
}, 120_000);
afterAll(async () => {
  await trawl?.running.stop();
  await site?.close();
  await cluster?.stop();
}, 120_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Per replica: each table's rows (FINAL for Replacing tables) and a hash of the documents, once each has synced. */
async function replicaRows(database: string): Promise<Record<string, string>[]> {
  const clients = (cluster?.urls ?? []).map((url) => new ClickHouseClient({ url, user: "default", password: "", database, cluster: cluster?.cluster }));
  const tablesOf = await Promise.all(clients.map((ch) => ch.query<{ name: string; engine: string }>(
    sql`SELECT name, engine FROM system.tables WHERE database = ${database} ORDER BY name`,
  )));
  for (const [i, ch] of clients.entries()) for (const { name } of tablesOf[i] ?? []) await ch.exec(raw(`SYSTEM SYNC REPLICA ${ch.table(name)}`));
  return Promise.all(clients.map(async (ch, i) => {
    const out: Record<string, string> = {};
    for (const { name, engine } of tablesOf[i] ?? []) {
      const [row] = await ch.query<{ n: string }>(raw(`SELECT toString(count()) AS n FROM ${ch.table(name)}${/Replacing/.test(engine) ? " FINAL" : ""}`));
      out[name] = row?.n ?? "";
    }
    if (out.documents !== undefined) {
      const [docs] = await ch.query<{ h: string }>(raw(`SELECT toString(sum(cityHash64(crawl_id, seq, url_key, doc))) AS h FROM ${ch.table("documents")}`));
      out["documents#hash"] = docs?.h ?? "";
    }
    return out;
  }));
}

it("heals a replica that comes back with an empty disk: the crawl is exact and both replicas end with the same rows", async () => {
  const [first = "", second = ""] = cluster?.urls ?? [];
  site = await startManyPagesSite({ sections: 4, pagesPerSection: 15, delayMs: 20 });
  trawl = await startTrawl({ mode: "cluster", clickhouseUrl: `${first},${second}`, clickhouseCluster: cluster?.cluster ?? "", fetchConcurrency: 4 });
  const database = trawl.config.clickhouseDatabase;
  const pages = site.paths.length;
  const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/`, limit: 10_000 });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const id: string = res.body.id;
  await site.holdAt(Math.round(pages / 3));
  // what the first replica acknowledged is on the second before it dies: replication is asynchronous, and a part
  // only the lost disk held is lost with it (docs/operations.md); this test is about the replica coming back
  await sleep(1000);
  await replicaRows(database);

  // the replica in use dies, and comes back as a replaced machine: no data, no `trawl` database
  await cluster?.kill9(0);
  rmSync(cluster?.dataDir(0) ?? "", { recursive: true, force: true });
  site.release();
  await sleep(2000);
  await cluster?.up();

  // /health names the replica while it lacks the schema or catches up, then says ok
  const states = new Set<string>();
  const healthy = Date.now() + 90_000;
  let health: any;
  for (;;) {
    health = (await getJson(`${trawl.api}/health`)).body;
    for (const r of health.store?.replicas ?? []) if (r.url === first) states.add(r.state);
    if (health.status === "ok" && states.size > 0) break;
    if (Date.now() > healthy) throw new Error(`the replica was not healed: ${JSON.stringify(health)} (states seen: ${[...states].join(", ")})`);
    await sleep(100);
  }
  expect([...states].some((s) => s === "missing-schema" || s === "catching-up"), [...states].join(", ")).toBe(true);

  const status = (await waitForEnd(trawl.api, id, 90_000)).at(-1);
  expect(status).toMatchObject({ status: "completed", completed: pages, total: pages, creditsUsed: pages });
  const served = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data).map((d: any) => new URL(d.metadata.sourceURL).pathname);
  // the healed replica has every table again and the same rows as the other
  const [one, two] = await replicaRows(database);
  expect([...served].sort(), `documents on each replica once synced: ${one?.documents}, ${two?.documents}`).toEqual([...site.paths].sort());
  expect(Object.keys(one ?? {}).length).toBeGreaterThan(5);
  expect(one).toEqual(two);
  expect(one?.documents).toBe(String(pages));
  // the metrics name each replica's state
  const metrics = await (await fetch(`${trawl.api}/metrics`)).text();
  expect(metrics).toMatch(new RegExp(`trawl_clickhouse_replica_state\\{replica="${first}",state="up"[^}]*\\} 1\\n`));
}, 300_000);
