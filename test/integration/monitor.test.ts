// Monitors, in both modes: a monitor with a 2 s interval on a site that changes between checks runs on schedule,
// sends webhooks only for changes, survives a restart of every process (the ticks missed while down run once), and
// pauses. Cluster mode runs a second API process (a second scheduler) on one Kafka and one ClickHouse: each tick
// runs once (the site's home page is fetched exactly once per check), and README.md's "what changed this week"
// query answers from page_history.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startChangingSite, type ChangingSite } from "../fixtures/changing-site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";
import { systemClock } from "../../pipeline/runtime/clock.ts";
import { getJson, MODES, startTrawl, type Instance } from "./harness.ts";

const SECRET = "monitor-secret";
const INTERVAL_S = 2;

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(MODES)("%s mode", (mode) => {
  let replicas: Instance[] = [];
  let site: ChangingSite;
  let receiver: Receiver;
  const api = () => (replicas[0] as Instance).api;

  beforeAll(async () => {
    t0 = Date.now();
    const settings = { mode, allowLocalWebhooks: true, webhookSecret: SECRET, monitorMinIntervalMs: 1000, monitorPollMs: 150 };
    [site, receiver] = await Promise.all([startChangingSite(), startReceiver(SECRET)]);
    const first = await startTrawl(settings);
    replicas = [first];
    // cluster: a second API process (the role that runs the schedules) on the same topics, groups and database
    if (mode === "cluster") {
      const { topicPrefix, groupPrefix, clickhouseDatabase } = first.config;
      replicas.push(await startTrawl({ ...settings, topicPrefix, groupPrefix, clickhouseDatabase }, systemClock, ["api"]));
    }
  });

  afterAll(async () => {
    mark("done");
    // the extra API process first: the first one's stop drops the database
    for (const r of replicas.slice(1)) {
      await r.running.stop();
      rmSync(r.config.dataDir, { recursive: true, force: true });
    }
    await replicas[0]?.stop();
    await site?.close();
    await receiver?.close();
  });

  const checks = async (id: string): Promise<any[]> => (await getJson(`${api()}/v2/monitor/${id}/checks?limit=100`)).body.data;
  /** The started checks that completed, oldest first. */
  const completed = async (id: string) => (await checks(id)).filter((c) => c.status === "completed").reverse();
  const homeFetches = () => site.hits.get("/ 200") ?? 0;

  let t0 = Date.now();
  const mark = (what: string) => console.log(`[monitor ${mode}] ${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`);

  it("runs on schedule, reports changes (webhooks on change only), survives a restart, runs each tick once", async () => {
    mark("started");
    // the official JS SDK's monitor calls (intervalSeconds is Trawl's: not in the SDK's types)
    const fc = new Firecrawl({ apiKey: "fc-test", apiUrl: api() });
    const m: any = await fc.createMonitor({
      name: "fixture site", schedule: { intervalSeconds: INTERVAL_S } as never,
      targets: [{ type: "crawl", url: site.origin, crawlOptions: { limit: 20, sitemap: "skip" } }],
      webhook: { url: receiver.url, metadata: { team: "docs" } },
    });
    expect(m).toMatchObject({ name: "fixture site", status: "active", schedule: { intervalSeconds: INTERVAL_S, timezone: "UTC" }, lastRunAt: null, judgeEnabled: false });
    expect(Date.parse(m.nextRunAt) - Date.parse(m.createdAt)).toBe(INTERVAL_S * 1000);

    // check 1: every page new
    const c1 = await until("a completed check", async () => (await completed(m.id))[0]);
    mark("check 1");
    expect(c1.summary).toEqual({ totalPages: 5, new: 5, same: 0, changed: 0, removed: 0, error: 0 });
    expect(c1.trigger).toBe("scheduled");
    expect((Date.parse(c1.scheduledFor) - Date.parse(m.createdAt)) % (INTERVAL_S * 1000)).toBe(0);
    // a check is a crawl: its id reads as one
    expect((await getJson(`${api()}/v2/crawl/${c1.id}`)).body.status).toBe("completed");

    // paused while the site changes (no check runs then), resumed: ticks count from the resume
    const paused = await fc.updateMonitor(m.id, { status: "paused" });
    expect(paused).toMatchObject({ status: "paused", nextRunAt: null });
    const pausedAt = Date.now();
    await until("no running check", async () => (await checks(m.id)).every((c) => c.status !== "running" && c.status !== "queued"));
    site.advance();
    const resumed: any = await fc.updateMonitor(m.id, { status: "active" });
    const resumedAt = Date.parse(resumed.updatedAt);
    expect(Date.parse(resumed.nextRunAt) - resumedAt).toBe(INTERVAL_S * 1000);
    const c3 = await until("a check after the change", async () => (await completed(m.id)).find((c) => Date.parse(c.scheduledFor) > resumedAt));
    expect((await checks(m.id)).filter((c) => Date.parse(c.scheduledFor) > pausedAt + 200 && Date.parse(c.scheduledFor) <= resumedAt)).toEqual([]);
    mark("check 3");
    expect(c3.summary).toEqual({ totalPages: 6, new: 1, same: 2, changed: 2, removed: 1, error: 0 });
    const detail: any = await fc.getMonitorCheck(m.id, c3.id);
    const pages = Object.fromEntries(detail.pages.map((p: any) => [new URL(p.url).pathname, p.status]));
    expect(pages).toEqual({ "/": "changed", "/price": "changed", "/etag": "same", "/static": "same", "/new": "new", "/gone": "removed" });
    expect(detail.pages.find((p: any) => p.url.endsWith("/price")).diff.text).toContain("+12 EUR");

    // every process stops for 2.1 intervals and starts again: of the ticks missed while down (at least two), only the
    // latest runs, once, on start (the first poll may come a tick or two later when the start is slow)
    await until("the running check to end", async () => (await checks(m.id)).every((c) => c.status !== "running"));
    await Promise.all(replicas.map((r) => r.running.stop()));
    const stoppedAt = Date.now();
    mark("stopped");
    await new Promise((r) => setTimeout(r, 2.1 * INTERVAL_S * 1000));
    const relaunchAt = Date.now();
    replicas = await Promise.all(replicas.map((r) => r.relaunch()));
    mark("started again");
    await until("a completed check after the restart", async () => (await completed(m.id)).some((c) => Date.parse(c.scheduledFor) > stoppedAt));
    mark("a check after the restart");
    const afterStop = (await checks(m.id)).filter((c) => Date.parse(c.scheduledFor) > stoppedAt);
    expect(afterStop.length).toBeGreaterThan(0);
    expect(afterStop.filter((c) => Date.parse(c.scheduledFor) <= relaunchAt - INTERVAL_S * 1000), JSON.stringify(afterStop)).toEqual([]);
    expect(afterStop.find((c) => c.status === "completed")?.summary).toEqual({ totalPages: 5, new: 0, same: 5, changed: 0, removed: 0, error: 0 });

    // each tick ran once: one check per tick, and one fetch of the home page per started check (with two replicas in
    // cluster mode, both schedulers fire every tick). Counted once every check has ended: paused first (no check
    // starts once the pause is written), then no check running. Counted while the 2 s ticks went on, a check just
    // started (its row written, its crawl not yet at the home page) made the count one short: `expected 5 to be 6`.
    await fc.updateMonitor(m.id, { status: "paused" });
    await until("no running check", async () => (await checks(m.id)).every((c) => c.status !== "running" && c.status !== "queued"));
    const all = await checks(m.id);
    const ticks = all.map((c) => c.scheduledFor);
    expect(new Set(ticks).size).toBe(ticks.length);
    const started = all.filter((c) => c.status !== "skipped_overlap");
    expect(homeFetches(), JSON.stringify(all.map((c) => [c.id.slice(0, 8), c.status, c.scheduledFor, c.startedAt, c.finishedAt, c.summary]))).toBe(started.length);

    // webhooks on change only: check 1 (5 new pages), check 3 (2 changed, 1 new, 1 removed); none for unchanged checks
    await until("the webhooks of checks 1 and 3", async () => receiver.received.filter((r) => r.type === "monitor.check.completed").length >= 2);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.every((r) => r.validSignature)).toBe(true);
    const byCheck = (id: string, type: string) => receiver.received.filter((r) => r.id === id && r.type === type);
    expect(byCheck(c1.id, "monitor.page").map((r) => r.body.data[0].status)).toEqual(["new", "new", "new", "new", "new"]);
    const changedPages = byCheck(c3.id, "monitor.page").map((r) => [new URL(r.body.data[0].url).pathname, r.body.data[0].status]).sort();
    expect(changedPages).toEqual([["/", "changed"], ["/new", "new"], ["/price", "changed"]]);
    expect(byCheck(c3.id, "monitor.page").find((r) => r.body.data[0].url.endsWith("/price"))?.body.data[0].diff.text).toContain("-10 EUR");
    const done3 = byCheck(c3.id, "monitor.check.completed");
    expect(done3).toHaveLength(1);
    expect(done3[0]?.body).toMatchObject({ success: true, metadata: { team: "docs" }, data: [{ monitorId: m.id, checkId: c3.id, status: "completed", summary: { new: 1, changed: 2, removed: 1, same: 2 } }] });
    const quiet = all.filter((c) => ![c1.id, c3.id].includes(c.id)).map((c) => c.id);
    expect(receiver.received.filter((r) => quiet.includes(r.id))).toEqual([]);

    // README's query: which pages of this site changed this week
    if (mode === "cluster") {
      const readme = readFileSync(join(import.meta.dirname, "..", "..", "README.md"), "utf8");
      const query = /## What changed this week[\s\S]*?```sql\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(query).toBeDefined();
      const cfg = replicas[0]?.config;
      const ch = new ClickHouseClient({ url: cfg?.clickhouseUrl ?? "", user: cfg?.clickhouseUser ?? "", password: cfg?.clickhousePassword ?? "", database: cfg?.clickhouseDatabase ?? "" });
      const sql = String(query).replace("FROM page_history", `FROM ${ch.table("page_history")}`).replace("docs.example.com", "127.0.0.1");
      const rows = await ch.query<{ url: string; statuses: string[]; jobs: unknown }>(raw(sql));
      const got = Object.fromEntries(rows.map((r) => [new URL(r.url).pathname, [...r.statuses].sort()]));
      expect(got).toEqual({ "/": ["changed", "new"], "/price": ["changed", "new"], "/etag": ["new"], "/static": ["new"], "/gone": ["new", "removed"], "/new": ["new"] });
    }

    // a manual run (paused above: no tick between), a second one while it runs is a 409; then delete
    const sdk = new Firecrawl({ apiKey: "fc-test", apiUrl: api() });
    const manual: any = await sdk.runMonitor(m.id);
    expect(manual).toMatchObject({ monitorId: m.id, trigger: "manual" });
    await expect(sdk.runMonitor(m.id)).rejects.toThrow(/already running/);
    expect(await sdk.deleteMonitor(m.id)).toBe(true);
    expect((await getJson(`${api()}/v2/monitor/${m.id}`)).status).toBe(404);
  }, 120_000);
});
