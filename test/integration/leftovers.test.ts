// What earlier test runs left in the shared Kafka and ClickHouse is removed before a run; a run going on beside it
// (names less than two hours old) keeps its own.
import { awaitLeaders, createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";
import { removeLeftovers, testTagTime } from "./leftovers.ts";

const config = loadConfig(process.env);
const tagAt = (letter: string, t: number) => `${letter}${t.toString(36)}${"0a1b2c"}`;

describe("test tags", () => {
  it("give back the time their test started; other names are not tags", () => {
    const t = Date.UTC(2026, 10, 20, 12);
    expect(testTagTime(`${tagAt("t", t)}.crawl.pages`, ".")).toBe(t);
    expect(testTagTime(`f${t.toString(36)}.frontier.inbox`, ".")).toBe(t);
    expect(testTagTime(`reject${t.toString(36)}.crawl.pages`, ".")).toBe(t);
    expect(testTagTime("trawl.crawl.pages", ".")).toBeNull();
    expect(testTagTime("t1234.crawl.pages", ".")).toBeNull();
    expect(testTagTime("__consumer_offsets", ".")).toBeNull();
  });
});

describe("removeLeftovers", () => {
  it("deletes test topics and databases older than two hours and keeps younger ones and everything else", async () => {
    const now = Date.now();
    const old = tagAt("t", now - 3 * 3600_000);
    const young = tagAt("t", now - 10 * 60_000);
    const kafka = createKafka(config, "leftovers-test", createLogger("silent"));
    const admin = kafka.admin();
    const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: "system" });
    try {
      const names = [`${old}.crawl.pages`, `${young}.crawl.pages`, `keep${now.toString(36)}.crawl.pages`];
      await admin.createTopics({ topics: names, partitions: 1, replicas: 1 });
      await awaitLeaders(admin, names);
      for (const db of [`trawl_${old}`, `trawl_${young}`]) await ch.exec(raw(`CREATE DATABASE IF NOT EXISTS ${db}`));

      const removed = await removeLeftovers(now);
      expect(removed.topics).toBeGreaterThanOrEqual(1);
      expect(removed.databases).toBeGreaterThanOrEqual(1);
      // a deletion the controller accepted reaches every broker's metadata a moment later (seen: still listed once)
      let topics = new Set(await admin.listTopics());
      for (let i = 0; i < 50 && topics.has(`${old}.crawl.pages`); i++) {
        await new Promise((r) => setTimeout(r, 200));
        topics = new Set(await admin.listTopics());
      }
      expect(topics.has(`${old}.crawl.pages`)).toBe(false);
      expect(topics.has(`${young}.crawl.pages`)).toBe(true);
      expect(topics.has(`keep${now.toString(36)}.crawl.pages`)).toBe(true);
      const dbs = new Set((await ch.query<{ name: string }>(raw("SELECT name FROM system.databases"))).map((r) => r.name));
      expect(dbs.has(`trawl_${old}`)).toBe(false);
      expect(dbs.has(`trawl_${young}`)).toBe(true);
    } finally {
      await admin.deleteTopics({ topics: [`${young}.crawl.pages`, `keep${now.toString(36)}.crawl.pages`] }).catch(() => undefined);
      await ch.exec(raw(`DROP DATABASE IF EXISTS trawl_${young}`));
      await admin.close();
    }
  });
});
