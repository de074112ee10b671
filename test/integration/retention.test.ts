// Retention in ClickHouse drops whole days (partitions) of expired rows: expired crawls disappear, unexpired ones and
// the days a live crawl still writes stay, and no mutation (ALTER TABLE … DELETE) is ever issued. A database made by
// the release before partitioning is upgraded in place: its tables are read with the new ones until their crawls expire.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../../pipeline/store/clickhouse-crawl-store.ts";
import { ClickHousePageCache } from "../../pipeline/store/clickhouse-page-cache.ts";
import { ClickHouseScreenshotStore } from "../../pipeline/store/screenshot-store.ts";
import { readScrape } from "../../pipeline/usecases/scrape-page.ts";
import { readScreenshot } from "../../pipeline/usecases/screenshot.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { DAY_MS, LEGACY_SUFFIX, RETAINED } from "../../pipeline/store/clickhouse-retention.ts";
import type { CrawlRecord, DocumentRow, ExpiredCrawl } from "../../pipeline/store/crawl-store.ts";
import { ADDED_COLUMNS, migrate, migrations } from "../../pipeline/store/migrations.ts";
import { raw, sql } from "../../pipeline/store/sql.ts";
import { scrapeJobId } from "../../pipeline/runtime/constants.ts";
import { InfrastructureError } from "../../pipeline/runtime/errors.ts";
import { retry } from "../../pipeline/runtime/retry.ts";

const config = loadConfig(process.env);
const suffix = `${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
const client = (name: string) => new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: `trawl_${name}_${suffix}` });
const dbs: ClickHouseClient[] = [];
afterAll(async () => {
  // a migration a failed test left running may still create a table: DROP DATABASE then asks to be tried again
  for (const ch of dbs) await retry(() => ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`)), { retries: 10, initialMs: 200, maxMs: 1000, retriable: () => true });
});

const now = Date.now();
const dayStart = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;
const RETENTION = DAY_MS;

const crawl = (crawlId: string, at: number, over: Partial<CrawlRecord> = {}): CrawlRecord => ({
  crawlId, version: 1, teamId: "team-r", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
  webhook: "", status: "completed", total: 1, completed: 1, failed: 0, creditsUsed: 3, tokensUsed: 0, discoveryDone: true,
  createdAt: at, updatedAt: at, completedAt: at, expiresAt: at + RETENTION, error: "", ...over,
});
const doc = (crawlId: string, seq: number, at: number): DocumentRow => ({ crawlId, seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: `s${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1, storedAt: at, doc: JSON.stringify({ markdown: `page ${seq}` }) });

const png = { type: "png" as const, bytes: Buffer.from("89504e47", "hex") };

/** Every row a crawl writes, at `at`: record, documents, URL states, an error, a delivery, a screenshot (and a cancel when ended). */
async function writeCrawl(ch: ClickHouseClient, store: ClickHouseCrawlStore, record: CrawlRecord, at: number): Promise<void> {
  await store.saveCrawls([record]);
  await new ClickHouseScreenshotStore(ch).put(record.crawlId, randomUUID(), png, at);
  await store.insertDocuments([doc(record.crawlId, 0, at), doc(record.crawlId, 1, at)]);
  // frontier_urls' day is the server's clock at insert (written_at defaults to it); set here to write the past
  await ch.exec(sql`INSERT INTO ${raw(ch.table("frontier_urls"))} (crawl_id, url_key, url, depth, state, version, written_at) VALUES (${record.crawlId}, 'k0', 'https://s.test/0', 0, 2, 1, ${at})`);
  await store.insertErrors([{ crawlId: record.crawlId, urlKey: "k9", url: "https://s.test/9", code: "HTTP_404", error: "not found", statusCode: 404, at }]);
  await store.logDeliveries([{ crawlId: record.crawlId, eventId: "e1", event: "crawl.page", url: "https://hook.test/", statusCode: 200, attempt: 1, error: "", at }]);
  if (record.status !== "scraping") await store.cancelCrawl(record.crawlId, at);
}

const count = async (ch: ClickHouseClient, table: string, crawlId: string) =>
  Number((await ch.query<{ n: unknown }>(sql`SELECT count() AS n FROM ${raw(ch.table(table))} WHERE crawl_id = ${crawlId}`))[0]?.n);
const days = async (ch: ClickHouseClient, table: string) =>
  (await ch.query<{ partition: string }>(sql`SELECT DISTINCT partition FROM system.parts WHERE database = ${ch.database} AND table = ${table} AND active ORDER BY partition`)).map((p) => Number(p.partition));
const mutations = async (ch: ClickHouseClient) =>
  (await ch.query<{ table: string; command: string }>(sql`SELECT table, command FROM system.mutations WHERE database = ${ch.database}`));

describe("ClickHouse retention by day", () => {
  it("drops the days of expired crawls whole, keeps unexpired crawls and the days a live crawl wrote, and issues no mutation", async () => {
    const ch = client("ret");
    dbs.push(ch);
    const store = new ClickHouseCrawlStore(ch, await migrate(ch));
    const dayA = dayStart(now) - 5 * DAY_MS + 3_600_000; // only expired crawls
    const dayB = dayStart(now) - 4 * DAY_MS + 3_600_000; // an expired crawl and a crawl still running
    const [old, old2, running, fresh, keeper, spanning] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await writeCrawl(ch, store, crawl(old, dayA), dayA);
    await writeCrawl(ch, store, crawl(old2, dayB), dayB);
    await writeCrawl(ch, store, crawl(running, dayB, { status: "scraping", expiresAt: 0 }), dayB);
    await writeCrawl(ch, store, crawl(keeper, dayB, { status: "scraping", expiresAt: 0 }), dayB);
    await writeCrawl(ch, store, crawl(fresh, now - 3_600_000), now - 3_600_000);
    // a crawl whose versions span days: started on day B, ended an hour ago
    await store.saveCrawls([crawl(spanning, dayB, { status: "scraping", expiresAt: 0 }), crawl(spanning, dayB, { version: 2, updatedAt: now - 3_600_000, completedAt: now - 3_600_000, expiresAt: now - 3_600_000 + RETENTION })]);
    const scrape = scrapeJobId("team-r", randomUUID());
    await store.insertDocuments([doc(scrape, 0, dayA)]);
    await new ClickHouseScreenshotStore(ch).put(scrape, randomUUID(), png, dayA);
    await ch.insert("idempotency_keys", ["team_id", "key", "claim_id", "at"], [["team-r", "key-a", "c1", dayA]]);
    const dA = Math.floor(dayA / DAY_MS);
    const dB = Math.floor(dayB / DAY_MS);
    for (const r of RETAINED.filter((t) => t.table !== "expired_crawls")) expect(await days(ch, r.table), r.table).toContain(dA);

    const ledger: ExpiredCrawl[] = [];
    const ids = await store.deleteExpired(now, RETENTION, async (crawls) => void ledger.push(...crawls));
    expect(await mutations(ch)).toEqual([]);
    expect(ids.sort()).toEqual([old, old2].sort());
    expect(ledger.map((c) => [c.crawlId, c.creditsUsed]).sort()).toEqual([[old, 3], [old2, 3]].sort());
    // expired crawls are gone for reads at once; the others read as before
    expect(await store.getCrawl(old)).toBeNull();
    expect(await store.getCrawl(old2)).toBeNull();
    expect((await store.pageDocuments(old2, 0, 1e6, 10)).docs).toEqual([]);
    expect((await store.getCrawl(fresh))?.status).toBe("completed");
    expect((await store.pageDocuments(fresh, 0, 1e6, 10)).docs).toHaveLength(2);
    expect((await store.getCrawl(running))?.status).toBe("scraping");
    expect((await store.pageDocuments(running, 0, 1e6, 10)).docs).toHaveLength(2);
    expect(await store.loadUrls(running)).toHaveLength(1);
    // day A is dropped from every table (the single scrape and the idempotency key with it); day B is held by the running crawl
    for (const r of RETAINED.filter((t) => t.table !== "expired_crawls")) {
      expect(await days(ch, r.table), r.table).not.toContain(dA);
      if (r.pin === "live" && r.table !== "crawl_cancels") expect(await days(ch, r.table), r.table).toContain(dB);
    }
    for (const table of ["documents", "crawls", "frontier_urls", "crawl_errors", "webhook_deliveries", "crawl_cancels"]) expect(await count(ch, table, old), table).toBe(0);
    expect(await count(ch, "documents", scrape)).toBe(0);
    const shots = async (job: string) => Number((await ch.query<{ n: unknown }>(sql`SELECT count() AS n FROM ${raw(ch.table("screenshots"))} WHERE job_id = ${job}`))[0]?.n);
    expect([await shots(old), await shots(scrape), await shots(running)]).toEqual([0, 0, 1]);
    expect(await store.claimIdempotencyKey("team-r", "key-a", now)).toBe(true);
    // a later sweep hands no crawl to the ledger twice
    expect(await store.deleteExpired(now + 60_000, RETENTION, async (crawls) => void ledger.push(...crawls))).toEqual([]);
    expect(ledger).toHaveLength(2);

    // the running crawl ends; a day later everything of today has expired, day B is still held by the crawl that runs on
    await store.saveCrawls([crawl(running, dayB, { version: 2, status: "completed", updatedAt: now, completedAt: now, expiresAt: now + RETENTION })]);
    const later = now + 2 * DAY_MS;
    expect((await store.deleteExpired(later, RETENTION)).sort()).toEqual([fresh, running, spanning].sort());
    const today = Math.floor(now / DAY_MS);
    for (const table of ["documents", "crawls"]) expect(await days(ch, table), table).toEqual([dB]);
    // the spanning crawl's first version ('scraping', day B) is still stored: it must not read as running again
    expect(await store.runningCrawlIds()).toEqual([keeper]);
    expect((await store.activeCrawls("team-r")).map((c) => c.crawlId)).toEqual([keeper]);
    expect([...(await store.usageByCrawl("team-r")).keys()]).toEqual([keeper]);
    expect(await store.getCrawl(spanning)).toBeNull();
    expect(await days(ch, "expired_crawls")).toContain(today);

    // the last crawl ends and expires: every day goes, the expiry marks with them
    await store.saveCrawls([crawl(keeper, dayB, { version: 2, status: "completed", updatedAt: later, completedAt: later, expiresAt: later + RETENTION })]);
    expect(await store.deleteExpired(later + 2 * DAY_MS, RETENTION)).toEqual([keeper]);
    for (const r of RETAINED.filter((t) => t.table !== "expired_crawls")) expect(await days(ch, r.table), r.table).toEqual([]);
    expect(await store.deleteExpired(later + 4 * DAY_MS, RETENTION)).toEqual([]);
    expect(await days(ch, "expired_crawls")).toEqual([]);
    expect(await mutations(ch)).toEqual([]);
  });

  it("serves a single scrape, its screenshot and its idempotency key until exactly 24 h after they were written; their day goes later", async () => {
    const ch = client("retexact");
    dbs.push(ch);
    const store = new ClickHouseCrawlStore(ch, await migrate(ch));
    const screenshots = new ClickHouseScreenshotStore(ch);
    const [scrapeId, shotId] = [randomUUID(), randomUUID()];
    const job = scrapeJobId("team-x", scrapeId);
    const at = now - 60_000;
    await store.insertDocuments([doc(job, 0, at)]);
    await screenshots.put(job, shotId, png, at);
    const deps = { store, screenshots };
    expect(await readScrape(store, "team-x", scrapeId, at + RETENTION - 1)).toContain("page 0");
    expect(await readScreenshot(deps, "team-x", scrapeId, shotId, at + RETENTION - 1)).toEqual(png);
    expect(await readScrape(store, "team-x", scrapeId, at + RETENTION + 1)).toBeUndefined();
    expect(await readScreenshot(deps, "team-x", scrapeId, shotId, at + RETENTION + 1)).toBeNull();
    expect(await store.claimIdempotencyKey("team-x", "key-x", at)).toBe(true);
    expect(await store.claimIdempotencyKey("team-x", "key-x", at + RETENTION - 1)).toBe(false);
    expect(await store.claimIdempotencyKey("team-x", "key-x", at + RETENTION + 1)).toBe(true);
    // a sweep at that instant keeps their day (it is not over for 24 h yet); the rows are still there, unserved
    await store.deleteExpired(at + RETENTION + 1, RETENTION);
    expect(await count(ch, "documents", job)).toBe(1);
    expect(await screenshots.get(job, shotId)).toEqual(png);
    // once their day is past the retention, it is dropped whole
    await store.deleteExpired(dayStart(at) + 2 * DAY_MS, RETENTION);
    expect(await count(ch, "documents", job)).toBe(0);
    expect(await screenshots.get(job, shotId)).toBeNull();
    expect(await mutations(ch)).toEqual([]);
  });

  it("empties the page cache of whole days past its age, without a mutation; younger pages are still served", async () => {
    const ch = client("retcache");
    dbs.push(ch);
    await migrate(ch);
    const cache = new ClickHousePageCache(ch, createLogger("silent"));
    const page = (key: string, storedAt: number) => ({ key, url: `https://s.test/${key}`, finalUrl: `https://s.test/${key}`, statusCode: 200, contentType: "text/html", body: `<p>${key}</p>`, storedAt });
    cache.put([page("old", now - 3 * DAY_MS), page("young", now - 60_000)]);
    await cache.close();
    expect((await days(ch, "page_cache")).length).toBe(2);
    await cache.deleteBefore(now - 2 * DAY_MS);
    expect(await days(ch, "page_cache")).toEqual([Math.floor(now / DAY_MS)]);
    expect(await cache.get("old", 0)).toBeNull();
    expect((await cache.get("young", now - 2 * DAY_MS))?.body).toBe("<p>young</p>");
    expect(await mutations(ch)).toEqual([]);
  });

  it("upgrades a database of the release before partitioning: old rows stay readable, old tables go once their crawls expired", async () => {
    const ch = client("retup");
    dbs.push(ch);
    // the schema as the previous release created it: no PARTITION BY, no written_at, no expired_crawls
    const before = migrations(ch.database)
      .filter((s) => !s.includes(".expired_crawls "))
      .map((s) => s.replace(/ PARTITION BY intDiv\(\w+, \d+\)/, "").replace(/,\s*written_at UInt64 DEFAULT [^\n]+/, ""));
    for (const s of before) await ch.exec(raw(s));
    for (const c of ADDED_COLUMNS) await ch.exec(raw(`ALTER TABLE ${ch.table(c.table)} ADD COLUMN ${c.column} ${c.type}`));
    expect(await ch.query(sql`SELECT name FROM system.tables WHERE database = ${ch.database} AND partition_key != ''`)).toEqual([]);
    const oldStore = new ClickHouseCrawlStore(ch);
    const [expired, live] = [randomUUID(), randomUUID()];
    await oldStore.saveCrawls([crawl(expired, now - 3 * DAY_MS), crawl(live, now - 60_000, { status: "scraping", expiresAt: 0 })]);
    await oldStore.insertDocuments([doc(expired, 0, now - 3 * DAY_MS), doc(live, 0, now - 60_000)]);
    await oldStore.saveUrls([{ crawlId: live, urlKey: "k0", url: "https://s.test/0", depth: 0, state: 2, version: 1 }]);
    const shotId = randomUUID();
    await new ClickHouseScreenshotStore(ch).put(live, shotId, png, now - 60_000);

    // every role migrates at start, at the same time, while a role of the old release goes on storing pages
    let writing = true;
    const written: number[] = [];
    const writer = (async () => {
      // as the runner does: an infrastructure failure (the table renamed under the INSERT) is tried again
      for (let seq = 100; writing; seq++) {
        await retry(() => oldStore.insertDocuments([doc(live, seq, now)]), { retries: 20, initialMs: 10, maxMs: 200, retriable: (err) => err instanceof InfrastructureError });
        written.push(seq);
      }
    })();
    // (the writer stops whatever the migrations did: left running, it wrote into the dropped database after the test)
    const results = await Promise.all([migrate(ch), migrate(ch), migrate(ch)]).finally(() => (writing = false));
    await writer;
    const legacy = await migrate(ch);
    for (const r of results) expect([...r].sort()).toEqual([...legacy].sort());
    const retained = RETAINED.map((r) => r.table).filter((t) => t !== "expired_crawls");
    expect([...legacy].sort()).toEqual(retained.sort());
    const keys = await ch.query<{ name: string; partition_key: string }>(sql`SELECT name, partition_key FROM system.tables WHERE database = ${ch.database} ORDER BY name`);
    for (const t of retained) {
      expect(keys.find((k) => k.name === t)?.partition_key, t).toMatch(/intDiv/);
      expect(keys.find((k) => k.name === `${t}${LEGACY_SUFFIX}`)?.partition_key, t).toBe("");
    }
    expect(keys.map((k) => k.name).filter((n) => n.endsWith("_partitioned"))).toEqual([]);
    // the page cache is partitioned too; its old table keeps its name, unread, until the cache's sweep drops it: a role
    // that found the table unpartitioned before the others were done renames it only if that name is free (CI: it was
    // dropped at once, and such a role's late RENAME moved the new page_cache away and left none)
    expect(keys.find((k) => k.name === "page_cache")?.partition_key).toMatch(/intDiv/);
    expect(keys.find((k) => k.name === `page_cache${LEGACY_SUFFIX}`)?.partition_key).toBe("");
    await ch.exec(raw(`CREATE TABLE ${ch.table("page_cache_partitioned")} AS ${ch.table("page_cache")}`));
    const late = raw(`RENAME TABLE ${ch.table("page_cache")} TO ${ch.table(`page_cache${LEGACY_SUFFIX}`)}, ${ch.table("page_cache_partitioned")} TO ${ch.table("page_cache")}`);
    await expect(ch.exec(late)).rejects.toThrow(/already exists/);
    await ch.exec(raw(`DROP TABLE ${ch.table("page_cache_partitioned")}`));
    await new ClickHousePageCache(ch, createLogger("silent")).deleteBefore(now - DAY_MS);
    const cacheTables = await ch.query<{ name: string; partition_key: string }>(sql`SELECT name, partition_key FROM system.tables WHERE database = ${ch.database} AND name LIKE 'page_cache%'`);
    expect(cacheTables).toEqual([{ name: "page_cache", partition_key: expect.stringMatching(/intDiv/) }]);

    // the crawl goes on: old and new rows read together
    const store = new ClickHouseCrawlStore(ch, legacy);
    await store.insertDocuments([doc(live, 1, now)]);
    await store.saveUrls([{ crawlId: live, urlKey: "k1", url: "https://s.test/1", depth: 1, state: 2, version: 2 }]);
    expect((await store.getCrawl(live))?.status).toBe("scraping");
    // every page stored before, during and after the upgrade, once
    expect(written.length).toBeGreaterThan(0);
    const seqs = (await store.pageDocuments(live, 0, 1e9, 100_000)).docs.map((d) => Number(/page (\d+)/.exec(d)?.[1]));
    expect(seqs).toEqual([0, 1, ...written]);
    expect((await store.loadUrls(live)).map((u) => u.urlKey).sort()).toEqual(["k0", "k1"]);
    expect(await store.documentKeys(live)).toMatchObject({ nextSeq: (written.at(-1) ?? 0) + 1 });
    expect(await store.runningCrawlIds()).toEqual([live]);
    const shots = new ClickHouseScreenshotStore(ch, legacy);
    expect(await shots.get(live, shotId)).toEqual(png);

    // the expired crawl leaves reads; the old tables stay while the live crawl has rows in them
    expect(await store.deleteExpired(now, RETENTION)).toEqual([expired]);
    expect(await store.getCrawl(expired)).toBeNull();
    expect((await store.pageDocuments(expired, 0, 1e6, 10)).docs).toEqual([]);
    expect(await count(ch, `documents${LEGACY_SUFFIX}`, live)).toBeGreaterThanOrEqual(1);

    // it ends and expires: the old tables are dropped whole, reads go on from the new ones
    await store.saveCrawls([crawl(live, now - 60_000, { version: 2, status: "completed", updatedAt: now, completedAt: now, expiresAt: now + RETENTION })]);
    expect(await store.deleteExpired(now + 3 * DAY_MS, RETENTION)).toEqual([live]);
    const left = await ch.query<{ name: string }>(sql`SELECT name FROM system.tables WHERE database = ${ch.database} AND name LIKE ${`%${LEGACY_SUFFIX}`}`);
    expect(left).toEqual([]);
    expect(await store.getCrawl(live)).toBeNull();
    // a store made before the old table was dropped reads the new one alone (merge() finds one table)
    expect(await shots.get(live, shotId)).toBeNull();
    expect(await new ClickHouseCrawlStore(ch, await migrate(ch)).getCrawl(live)).toBeNull();
    expect(await mutations(ch)).toEqual([]);
  });
});

describe("screenshots of a database whose table was never partitioned", () => {
  // cluster mode converts no table (migrations.ts), so a cluster database made before screenshots were partitioned
  // keeps the old table: its expired rows are still deleted, by mutation, instead of staying for ever
  it("are deleted by mutation when their job expired; a partitioned table is left to the day drops", async () => {
    const ch = client("shots_legacy");
    dbs.push(ch);
    await ch.exec(raw(`CREATE DATABASE IF NOT EXISTS ${ch.database}`));
    await ch.exec(raw(`CREATE TABLE ${ch.database}.screenshots (job_id String, id String, type String, data_base64 String, stored_at UInt64) ENGINE = MergeTree() ORDER BY (job_id, id)`));
    const shots = new ClickHouseScreenshotStore(ch);
    const [gone, kept, oldScrape] = [randomUUID(), randomUUID(), scrapeJobId("team-r", randomUUID())];
    for (const [job, at] of [[gone, now], [kept, now], [oldScrape, now - 2 * DAY_MS]] as const) await shots.put(job, "i", png, at);
    await shots.deleteExpired([gone], now - DAY_MS);
    // a mutation runs in the background: wait for it
    await retry(async () => {
      const left = (await ch.query<{ job_id: string }>(sql`SELECT job_id FROM ${raw(ch.table("screenshots"))}`)).map((r) => r.job_id);
      if (left.length !== 1) throw new Error(`left: ${left.join(", ")}`);
      expect(left).toEqual([kept]);
    }, { retries: 25, initialMs: 200, maxMs: 400, retriable: () => true });

    const partitioned = client("shots_partitioned");
    dbs.push(partitioned);
    await migrate(partitioned);
    const pshots = new ClickHouseScreenshotStore(partitioned);
    await pshots.put(gone, "i", png, now);
    await pshots.deleteExpired([gone], now - DAY_MS);
    const mutations = await partitioned.query<{ n: number }>(sql`SELECT count() AS n FROM system.mutations WHERE database = ${partitioned.database}`);
    expect(Number(mutations[0]?.n)).toBe(0);
  });
});
