// A missing table is never a reason to drop a page (issue 49): the real ClickHouse's answer that Trawl's database does
// not exist (81 UNKNOWN_DATABASE) is an infrastructure failure, retried, never a bug to dead-letter; and the client
// heals the server (its migrations applied again), after which the same write passes. On the shared ClickHouse, in a
// database of this run's own.
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { classify } from "../../pipeline/runtime/errors.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../../pipeline/store/clickhouse-crawl-store.ts";
import { ReplicaWatch } from "../../pipeline/store/replica-heal.ts";
import { raw } from "../../pipeline/store/sql.ts";

const config = loadConfig(process.env);
const database = `trawl_gone_${randomBytes(4).toString("hex")}`;
const client = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database, caFile: config.clickhouseCaFile });
afterAll(async () => {
  await client.exec(raw(`DROP DATABASE IF EXISTS ${database}`));
});

const docs = (n: number) => Array.from({ length: n }, (_, i) => ({
  crawlId: "c1", seq: i, urlKey: `k${i}`, finalKey: "", scrapeId: `s${i}`, url: `https://s.test/${i}`, statusCode: 200, credits: 1, storedAt: i, doc: `{"i":${i}}`,
}));

it("retries a write into a database the server lacks (never dead-lettered), heals the server, and the write then passes", async () => {
  const store = new ClickHouseCrawlStore(client);
  // what a sink meets when the server lost Trawl's database: retried by the runner, not dead-lettered
  const lost = await store.insertDocuments(docs(3)).then(() => undefined, (err: unknown) => err);
  expect(String(lost)).toMatch(/Database trawl_gone_\w+ doesn't exist/);
  expect(classify(lost)).toBe("retry");

  // the client heals the server it was told lacks the schema; the retry passes
  new ReplicaWatch(client, createLogger("silent"));
  const healed = Date.now() + 30_000;
  for (;;) {
    const err = await store.insertDocuments(docs(3)).then(() => undefined, (e: unknown) => e);
    if (err === undefined) break;
    expect(classify(err)).toBe("retry");
    if (Date.now() > healed) throw err;
    await new Promise((r) => setTimeout(r, 200));
  }
  // the heal ends once every table is there again
  while (client.servers()[0]?.state !== "up" && Date.now() < healed) await new Promise((r) => setTimeout(r, 100));
  const [row] = await client.query<{ n: number }>(raw(`SELECT count() AS n FROM ${client.table("documents")}`));
  expect(Number(row?.n)).toBe(3);
  expect(client.servers()).toEqual([{ url: config.clickhouseUrl.replace(/\/+$/, ""), state: "up" }]);
}, 60_000);
