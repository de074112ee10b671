// A missing table is never a reason to drop a page (issue 49): the real ClickHouse's answer that Trawl's database does
// not exist (81 UNKNOWN_DATABASE) is an infrastructure failure, retried, never a bug to dead-letter; and the client
// heals the server (its migrations applied again), after which the same write passes. A server whose heal failed here
// while another process healed it serves again, and one server (no cluster) that lost a table gets it again. On the
// shared ClickHouse, in databases of this run's own.
import { randomBytes } from "node:crypto";
import { afterAll, expect, it } from "vitest";
import { classify } from "../../pipeline/runtime/errors.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient, SchemaMissingError } from "../../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../../pipeline/store/clickhouse-crawl-store.ts";
import { migrate } from "../../pipeline/store/migrations.ts";
import { LACKING_CHECKS, ReplicaWatch, healServer, missingTables } from "../../pipeline/store/replica-heal.ts";
import { raw } from "../../pipeline/store/sql.ts";

const config = loadConfig(process.env);
const database = `trawl_gone_${randomBytes(4).toString("hex")}`;
const client = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database, caFile: config.clickhouseCaFile });
const rejoined = `trawl_rejoin_${randomBytes(4).toString("hex")}`;
const dropped = `trawl_dropped_${randomBytes(4).toString("hex")}`;
afterAll(async () => {
  for (const db of [database, rejoined, dropped]) await client.exec(raw(`DROP DATABASE IF EXISTS ${db}`));
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

it("a server whose heal failed here while another process healed it serves again once a check finds it whole", async () => {
  const opts = { url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: rejoined, caFile: config.clickhouseCaFile };
  const mine = new ClickHouseClient(opts);
  const watch = new ReplicaWatch(mine, createLogger("silent"));
  // this process's heal fails (as an ON CLUSTER statement that timed out)
  mine.setHealer(async () => {
    throw new Error("timeout exceeded: the ON CLUSTER statement did not answer");
  });
  const url = mine.servers()[0]?.url as string;
  const lost = await new ClickHouseCrawlStore(mine).insertDocuments(docs(2)).then(() => undefined, (err: unknown) => err);
  expect(lost).toBeInstanceOf(SchemaMissingError);
  expect(mine.servers()[0]?.state).toBe("missing-schema");
  // another process heals the server meanwhile; this one's failed heal ends (its pause before another try included)
  const other = new ClickHouseClient(opts);
  await healServer(other, url, createLogger("silent"), "the other process's request");
  await mine.reportSchemaMissing(url, lost as SchemaMissingError);
  expect(mine.servers()[0]?.state).toBe("missing-schema");
  // the periodic check finds the schema whole, no heal under way: the server serves again (before: left out for good)
  const until = Date.now() + 20_000;
  while (mine.servers()[0]?.state !== "up" && Date.now() < until) {
    await watch.check();
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(mine.servers()).toEqual([{ url, state: "up" }]);
  expect(watch.replicas()).toEqual([{ url, state: "up" }]);
  await new ClickHouseCrawlStore(mine).insertDocuments(docs(2));
  const [row] = await mine.query<{ n: number }>(raw(`SELECT count() AS n FROM ${mine.table("documents")}`));
  expect(Number(row?.n)).toBe(2);
}, 60_000);

it("one server (no cluster) that lacks a table on several checks in a row gets the table again; a shorter absence (a RENAME between its steps) does not", async () => {
  const one = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: dropped, caFile: config.clickhouseCaFile });
  await migrate(one);
  await one.exec(raw(`DROP TABLE ${one.table("documents")}`));
  const store = new ClickHouseCrawlStore(one);
  const lost = await store.insertDocuments(docs(2)).then(() => undefined, (err: unknown) => err);
  expect(lost).toBeInstanceOf(SchemaMissingError);
  expect((lost as SchemaMissingError).clickhouseCode).toBe(60);
  expect(classify(lost)).toBe("retry");
  const watch = new ReplicaWatch(one, createLogger("silent"));
  for (let i = 1; i < LACKING_CHECKS; i++) await watch.check();
  expect(await missingTables(one)).toEqual(["documents"]);
  // the next check in a row applies the migrations again (before: the statements were retried for ever)
  await watch.check();
  const healed = Date.now() + 30_000;
  for (;;) {
    const err = await store.insertDocuments(docs(2)).then(() => undefined, (e: unknown) => e);
    if (err === undefined) break;
    expect(classify(err)).toBe("retry");
    if (Date.now() > healed) throw err;
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(await missingTables(one)).toEqual([]);
  expect(one.servers()[0]?.state).toBe("up");
}, 60_000);
