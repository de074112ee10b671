// The stores: ClickHouse against the real server and the embedded one on disk run the same contract
// (hostile values, idempotent sink on replay, paging, cancels); the embedded one also survives a reopen.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CrawlEvent, CrawlPage } from "../../schemas/index.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { systemClock } from "../../pipeline/runtime/clock.ts";
import type { Consumed } from "../../pipeline/runtime/bus.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../../pipeline/store/clickhouse-crawl-store.ts";
import { CancelCache } from "../../pipeline/store/cancel-cache.ts";
import { migrate, migrations } from "../../pipeline/store/migrations.ts";
import { ClickHouseAuthStore } from "../../pipeline/store/clickhouse-auth-store.ts";
import { raw, sql } from "../../pipeline/store/sql.ts";
import { SinkProcessor } from "../../pipeline/sink/sink.ts";
import { runSinkBatch } from "../../pipeline/sink/run-batch.testing.ts";
import { EmbeddedCrawlStore } from "../../pipeline/store/embedded-crawl-store.ts";
import type { CrawlStore } from "../../pipeline/store/crawl-store.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const config = loadConfig(process.env);
const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: `trawl_store_${Date.now().toString(36)}` });
const log = createLogger("silent");
const dataDir = mkdtempSync(join(tmpdir(), "trawl-store-"));

beforeAll(async () => {
  await migrate(ch);
  await migrate(ch); // idempotent
});
afterAll(async () => {
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
  rmSync(dataDir, { recursive: true, force: true });
});

describe("ClickHouse", () => {
  it("finds a hostile string by equality", async () => {
    const store = new ClickHouseCrawlStore(ch);
    const values = ["x' OR '1'='1", "\\'", "nul\0"];
    const crawlId = randomUUID();
    await store.insertErrors(values.map((v, i) => ({ crawlId, urlKey: `k${i}`, url: v, code: "C", error: v, statusCode: 0, at: i })));
    for (const v of values) {
      const one = await ch.query<{ n: number }>(sql`SELECT count() AS n FROM ${raw(ch.table("crawl_errors"))} WHERE url = ${v}`);
      expect(Number(one[0]?.n), v).toBe(1);
    }
  });
});

describe("ClickHouse INSERTs made at once", () => {
  it("are all stored, and a call the server refuses fails alone (the calls sharing its INSERT are stored)", async () => {
    await ch.exec(raw(`CREATE TABLE IF NOT EXISTS ${ch.table("group_probe")} (k String, n UInt32) ENGINE = MergeTree() ORDER BY k`));
    const good = Array.from({ length: 20 }, (_, i) => ch.insert("group_probe", ["k", "n"], [[`k${i}`, i], [`k${i}b`, i]]));
    const bad = ch.insert("group_probe", ["k", "n"], [["bad", "not a number"]]);
    const more = Array.from({ length: 5 }, (_, i) => ch.insert("group_probe", ["k", "n"], [[`m${i}`, i]]));
    await expect(bad).rejects.toThrow(/insert into group_probe failed/);
    await Promise.all([...good, ...more]);
    const rows = await ch.query<{ k: string }>(raw(`SELECT k FROM ${ch.table("group_probe")} ORDER BY k`));
    expect(rows).toHaveLength(45);
    expect(rows.map((r) => r.k)).not.toContain("bad");
  });
});

describe("ClickHouse migrations", () => {
  it("adds the columns of later releases to the tables of an earlier one, once, even when roles migrate at the same time", async () => {
    const old = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: `trawl_mig_${Date.now().toString(36)}` });
    try {
      // the tables as the first release created them (no tokens columns), with a row each
      for (const statement of migrations(old.database)) await old.exec(raw(statement));
      const before = await old.query<{ name: string }>(sql`SELECT name FROM system.columns WHERE database = ${old.database} AND name IN ('tokens_used', 'tokens')`);
      expect(before).toEqual([]);
      await old.exec(raw(`INSERT INTO ${old.table("crawls")} (crawl_id, version, team_id, url, options, webhook, status, created_at) VALUES ('c-old', 1, 'team-a', 'https://s.test/', '{}', '', 'completed', 5)`));
      await old.exec(raw(`INSERT INTO ${old.table("credit_usage")} (team_id, job_id, credits, at) VALUES ('team-a', 'scrape-old', 2, 7)`));
      await Promise.all([migrate(old), migrate(old), migrate(old)]);
      await migrate(old);
      const after = await old.query<{ table: string; name: string; type: string }>(
        sql`SELECT table, name, type FROM system.columns WHERE database = ${old.database} AND name IN ('tokens_used', 'tokens') ORDER BY table`,
      );
      expect(after).toEqual([{ table: "crawls", name: "tokens_used", type: "UInt64" }, { table: "credit_usage", name: "tokens", type: "UInt64" }]);
      const store = new ClickHouseCrawlStore(old);
      expect((await store.getCrawl("c-old"))?.tokensUsed).toBe(0);
      expect(await store.usageByCrawl("team-a")).toEqual(new Map([["c-old", { credits: 0, tokens: 0, at: 5 }]]));
      const auth = new ClickHouseAuthStore(old);
      await auth.recordUsage([{ teamId: "team-a", jobId: "extract:x", credits: 10, tokens: 321, at: 9 }]);
      expect(await auth.usage("team-a")).toEqual(new Map([["scrape-old", { credits: 2, tokens: 0, at: 7 }], ["extract:x", { credits: 10, tokens: 321, at: 9 }]]));
    } finally {
      await old.exec(raw(`DROP DATABASE IF EXISTS ${old.database}`));
    }
  });
});

const stores: [string, () => Promise<CrawlStore>][] = [
  ["clickhouse", async () => new ClickHouseCrawlStore(ch)],
  ["embedded", async () => EmbeddedCrawlStore.open(join(dataDir, "contract"), Date.now())],
];

describe.each(stores)("%s store", (_name, open) => {
  let store: CrawlStore;
  beforeAll(async () => {
    store = await open();
  });

  it("round-trips hostile strings", async () => {
    const values = ["it's", "back\\slash", "\\'", "nul\0byte", "line\nbreak\ttab\r", "ünïcödé 😀 日本語 한국어", "x' OR '1'='1", "a".repeat(300_000), "\u0007\b\f\v"];
    const crawlId = randomUUID();
    await store.insertErrors(values.map((v, i) => ({ crawlId, urlKey: `k${i}`, url: v, code: "C", error: v, statusCode: 0, at: i })));
    const back = await store.listErrors(crawlId);
    expect(back.map((r) => r.url)).toEqual(values);
  });

  const page = (crawlId: string, urlKey: string): Consumed<CrawlPage> => ({
    topic: "crawl.pages", partition: 0, offset: "0", key: crawlId,
    value: { crawlId, urlKey, credits: 1, document: { markdown: `# ${urlKey}`, metadata: { sourceURL: `https://s.test/${urlKey}`, url: `https://s.test/${urlKey}`, statusCode: 200, scrapeId: randomUUID() } } },
  });

  const runBatch = runSinkBatch;

  it("stores a page once, even when the batch is replayed by a fresh process", async () => {
    const crawlId = randomUUID();
    // running: a replay announces the stored pages again only while the crawl runs
    await store.saveCrawls([{ crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "scraping", total: 3, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0,
      discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: Date.now() + 3_600_000, error: "", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true } }]);
    const msgs = ["a", "b", "a", "c"].map((k) => page(crawlId, k));
    const first = new SinkProcessor({ store, cancels: new CancelCache(store, 0, systemClock.now), clock: systemClock, log });
    const out1 = await runBatch(first, msgs);
    // replay after a crash: a new sink with no memory
    const second = new SinkProcessor({ store, cancels: new CancelCache(store, 0, systemClock.now), clock: systemClock, log });
    const out2 = await runBatch(second, msgs);
    const docs = await store.pageDocuments(crawlId, 0, 10_000_000, 100);
    expect(docs.docs.map((d) => JSON.parse(d).markdown)).toEqual(["# a", "# b", "# c"]);
    expect(docs.more).toBe(false);
    // every message is still acknowledged to the frontier (PageDone); each document's event once per batch, and the
    // replay announces each again under the seq it was stored at (the first run's events may have been lost with it)
    expect(out1.filter((e) => e.topic === "frontier.inbox")).toHaveLength(4);
    expect(out2.filter((e) => e.topic === "frontier.inbox")).toHaveLength(4);
    const events = (out: typeof out1) => out.filter((e) => e.topic === "crawl.events").map((e) => e.value as CrawlEvent)
      .map((e) => [e.seq, e.document?.metadata.sourceURL]);
    expect(events(out1)).toHaveLength(3);
    expect(events(out2)).toEqual(events(out1));
  });

  it("drops pages of a cancelled crawl", async () => {
    const crawlId = randomUUID();
    await store.cancelCrawl(crawlId, Date.now());
    const sink = new SinkProcessor({ store, cancels: new CancelCache(store, 0, systemClock.now), clock: systemClock, log });
    expect(await runBatch(sink, [page(crawlId, "a")])).toEqual([]);
    expect((await store.pageDocuments(crawlId, 0, 1_000_000, 10)).docs).toEqual([]);
  });

  it("pages by seq under a byte budget and hides a duplicated row", async () => {
    const crawlId = randomUUID();
    const row = (seq: number, key: string, size: number) => ({ crawlId, seq, urlKey: key, finalKey: key, scrapeId: "s", url: "u", statusCode: 200, credits: 1, storedAt: seq, doc: JSON.stringify({ k: key, pad: "x".repeat(size) }) });
    await store.insertDocuments([row(0, "a", 100), row(1, "b", 100), row(2, "a", 100), row(3, "c", 100)]);
    const p1 = await store.pageDocuments(crawlId, 0, 250, 100);
    expect(p1.docs.map((d) => JSON.parse(d).k)).toEqual(["a", "b"]);
    expect(p1.more).toBe(true);
    const p2 = await store.pageDocuments(crawlId, p1.nextSkip, 250, 100);
    expect(p2.docs.map((d) => JSON.parse(d).k)).toEqual(["c"]);
    expect(p2.more).toBe(false);
  });

  /** A document row of url key `key` at `seq`, and how a page of them reads (key and seq of each document). */
  const dupRow = (crawlId: string, seq: number, key: string) => ({ crawlId, seq, urlKey: key, finalKey: key, scrapeId: "s", url: "u", statusCode: 200, credits: 1, storedAt: seq, doc: JSON.stringify({ k: key, seq }) });
  const shown = (p: { docs: string[] }) => p.docs.map((d) => JSON.parse(d) as { k: string; seq: number }).map((d) => `${d.k}${d.seq}`);

  it("fills a page past runs of duplicates, and says whether more follow", async () => {
    const crawlId = randomUUID();
    // a and b come again at 2 and 3 (and a once more at 6): hidden wherever the page starts
    await store.insertDocuments(["a", "b", "a", "b", "c", "d", "a", "e"].map((k, i) => dupRow(crawlId, i, k)));
    const p1 = await store.pageDocuments(crawlId, 0, 1_000_000, 2);
    expect(shown(p1)).toEqual(["a0", "b1"]);
    expect(p1.more).toBe(true);
    const p2 = await store.pageDocuments(crawlId, p1.nextSkip, 1_000_000, 2);
    expect(shown(p2)).toEqual(["c4", "d5"]);
    expect(p2.more).toBe(true);
    const p3 = await store.pageDocuments(crawlId, p2.nextSkip, 1_000_000, 2);
    expect(shown(p3)).toEqual(["e7"]);
    expect(p3.more).toBe(false);
    // a page that starts on a duplicate
    expect(shown(await store.pageDocuments(crawlId, 3, 1_000_000, 10))).toEqual(["c4", "d5", "e7"]);
    expect(shown(await store.pageDocuments(crawlId, 6, 1_000_000, 1))).toEqual(["e7"]);
  });

  it("hides a duplicate that shares its seq with a document shown", async () => {
    const crawlId = randomUUID();
    await store.insertDocuments([dupRow(crawlId, 0, "a"), dupRow(crawlId, 1, "b"), dupRow(crawlId, 1, "a"), dupRow(crawlId, 2, "c")]);
    const page = await store.pageDocuments(crawlId, 0, 1_000_000, 10);
    expect(shown(page)).toEqual(["a0", "b1", "c2"]);
    expect(page.more).toBe(false);
  });
});

describe("embedded store after a restart", () => {
  it("serves what was written before, and forgets crawls that expired", async () => {
    const dir = join(dataDir, "reopen");
    const a = await EmbeddedCrawlStore.open(dir, Date.now());
    const base = { version: 1, teamId: "bypass", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown" as const], onlyMainContent: true }, webhook: "", total: 1, completed: 1, failed: 0, creditsUsed: 1, tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 2, completedAt: 2, error: "" };
    const live = randomUUID();
    const old = randomUUID();
    await a.saveCrawls([{ ...base, crawlId: live, status: "completed", expiresAt: Date.now() + 3_600_000 }, { ...base, crawlId: old, status: "completed", expiresAt: Date.now() - 1 }]);
    await a.insertDocuments([{ crawlId: live, seq: 0, urlKey: "k", finalKey: "k2", scrapeId: "s", url: "u", statusCode: 200, credits: 1, storedAt: 1, doc: JSON.stringify({ markdown: "ünï \"q\"", metadata: {} }) }]);
    await a.saveUrls([{ crawlId: live, urlKey: "k", url: "u", depth: 0, state: 1, version: 1 }, { crawlId: live, urlKey: "k", url: "u", depth: 0, state: 2, version: 2 }]);
    await a.cancelCrawl(old, 5);
    await a.close();

    const b = await EmbeddedCrawlStore.open(dir, Date.now());
    expect((await b.getCrawl(live))?.status).toBe("completed");
    expect(await b.getCrawl(old)).toBeNull();
    const page = await b.pageDocuments(live, 0, 1_000_000, 10);
    expect(page.docs.map((d) => JSON.parse(d).markdown)).toEqual(["ünï \"q\""]);
    expect(await b.loadUrls(live)).toEqual([{ crawlId: live, urlKey: "k", url: "u", depth: 0, state: 2, version: 2 }]);
    expect(await b.documentKeys(live)).toEqual({ nextSeq: 1, seqs: [0], keys: ["k"], finalKeys: ["k2"] });
  });
});

describe.each(stores)("%s store retention", (_name, open) => {
  it("deletes crawls 24 h after they ended, and nothing else", async () => {
    const store = await open();
    const base = { version: 1, teamId: "bypass", url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown" as const], onlyMainContent: true }, webhook: "", total: 1, completed: 1, failed: 0, creditsUsed: 1, tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 2, completedAt: 2, error: "" };
    const old = randomUUID();
    const fresh = randomUUID();
    const now = Date.now();
    await store.saveCrawls([{ ...base, crawlId: old, status: "completed", expiresAt: now - 1000 }, { ...base, crawlId: fresh, status: "completed", expiresAt: now + 3_600_000 }]);
    const doc = (crawlId: string) => ({ crawlId, seq: 0, urlKey: "k", finalKey: "k", scrapeId: "s", url: "u", statusCode: 200, credits: 1, storedAt: 1, doc: "{}" });
    await store.insertDocuments([doc(old), doc(fresh)]);
    const deleted = await store.deleteExpired(now, 24 * 3600 * 1000);
    expect(deleted).toContain(old);
    expect(deleted).not.toContain(fresh);
    // reads skip an expired crawl at once (ClickHouse drops its rows with their day, see retention.test.ts)
    expect(await store.getCrawl(old)).toBeNull();
    expect((await store.pageDocuments(old, 0, 1e6, 10)).docs).toEqual([]);
    expect((await store.getCrawl(fresh))?.status).toBe("completed");
    expect((await store.pageDocuments(fresh, 0, 1e6, 10)).docs).toHaveLength(1);
  });
});
