// The scheduler over the real embedded bus and stores, with a clock the test moves: a due tick runs once even when two
// schedulers poll at the same moment, ticks missed while nothing ran run once, a paused or deleted monitor does not
// run, a tick during a running check is skipped, and a check's job is the crawl the frontier is asked for.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EmbeddedBus } from "../runtime/embedded-bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { EmbeddedMonitorStore, type MonitorRecord } from "../store/monitor-store.ts";
import { loadConfig } from "../runtime/config.ts";
import { MonitorScheduler } from "./monitor-scheduler.ts";
import { scheduledCheckId, type MonitorDeps } from "./monitors.ts";
import { CreditsError } from "./team-access.ts";

const T0 = Date.parse("2026-11-26T10:00:00Z");
const log = createLogger("silent");
let dir = "";
let bus: EmbeddedBus;
let store: EmbeddedCrawlStore;
let monitors: EmbeddedMonitorStore;
let now = T0;
let deps: MonitorDeps;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "trawl-scheduler-"));
  bus = await EmbeddedBus.open({ partitions: 2, dir, log });
  store = await EmbeddedCrawlStore.open(dir, T0);
  monitors = await EmbeddedMonitorStore.open(dir);
  now = T0;
  deps = { store, bus, clock: { now: () => now }, log, monitors, config: loadConfig({ ALLOW_PRIVATE_CRAWL_TARGETS: "true" }) };
});

afterEach(async () => {
  await bus.close();
  await store.close();
  await monitors.close();
  rmSync(dir, { recursive: true, force: true });
});

const body = (schedule: Record<string, unknown>) => JSON.stringify({ schedule, targets: [{ type: "crawl", url: "http://127.0.0.1:9/", crawlOptions: { limit: 3 } }] });
const monitor = (id: string, schedule: Record<string, unknown> = { intervalSeconds: 60 }, status: MonitorRecord["status"] = "active"): MonitorRecord =>
  ({ monitorId: id, teamId: "team", version: T0, name: id, status, body: body(schedule), anchor: T0, createdAt: T0, updatedAt: T0 });

describe("monitor scheduler", () => {
  it("runs a due tick once with two schedulers polling together, as a crawl with change tracking", async () => {
    await monitors.saveMonitor(monitor("m1"));
    const [a, b] = [new MonitorScheduler(deps), new MonitorScheduler(deps)];
    now = T0 + 59_000;
    expect(await Promise.all([a.poll(), b.poll()])).toEqual([0, 0]);
    now = T0 + 60_000;
    await Promise.all([a.poll(), b.poll()]);
    const checks = await monitors.listChecks("m1");
    expect(checks.map((c) => [c.checkId, c.scheduledFor, c.outcome])).toEqual([[scheduledCheckId("m1", T0 + 60_000), T0 + 60_000, "started"]]);
    const crawl = await store.getCrawl(checks[0]?.checkId ?? "");
    expect(crawl).toMatchObject({ teamId: "team", url: "http://127.0.0.1:9/", status: "scraping" });
    expect(crawl?.options.changeTracking).toMatchObject({ tag: "monitor:m1", modes: ["git-diff"] });
    expect(JSON.parse(crawl?.webhook || "null")).toBeNull();
    // polled again within the same tick: nothing more
    now = T0 + 90_000;
    expect(await a.poll()).toBe(0);
  });

  it("skips a tick while the previous check runs, runs the next one once it ended", async () => {
    await monitors.saveMonitor(monitor("m1"));
    const s = new MonitorScheduler(deps);
    now = T0 + 60_000;
    await s.poll();
    now = T0 + 120_000;
    await s.poll();
    expect((await monitors.listChecks("m1")).map((c) => c.outcome)).toEqual(["skipped_overlap", "started"]);
    const first = await store.getCrawl(scheduledCheckId("m1", T0 + 60_000));
    await store.saveCrawls([{ ...(first as NonNullable<typeof first>), version: 1, status: "completed", completedAt: now }]);
    now = T0 + 180_000;
    await s.poll();
    expect((await monitors.listChecks("m1")).map((c) => c.outcome)).toEqual(["started", "skipped_overlap", "started"]);
  });

  it("runs the ticks missed while down once (the latest), and never a paused or deleted monitor", async () => {
    await monitors.saveMonitor(monitor("m1", { cron: "*/5 * * * *" }));
    await monitors.saveMonitor(monitor("paused", { intervalSeconds: 60 }, "paused"));
    await monitors.saveMonitor(monitor("deleted", { intervalSeconds: 60 }, "deleted"));
    now = T0 + 3 * 3_600_000 + 7 * 60_000; // three hours down: 37 ticks missed
    expect(await new MonitorScheduler(deps).poll()).toBe(1);
    expect((await monitors.listChecks("m1")).map((c) => new Date(c.scheduledFor).toISOString())).toEqual(["2026-11-26T13:05:00.000Z"]);
    expect(await monitors.listChecks("paused")).toEqual([]);
    expect(await monitors.listChecks("deleted")).toEqual([]);
  });

  it("checks credits as a crawl submit does: a crawl's limit lowered to the credits left, no check without credits", async () => {
    await monitors.saveMonitor(monitor("m1"));
    await monitors.saveMonitor({ ...monitor("broke"), teamId: "broke" });
    const asked: unknown[][] = [];
    deps.admit = async (team, n, limit) => {
      asked.push([team, n, limit]);
      if (team === "broke") throw new CreditsError();
      return 2;
    };
    now = T0 + 60_000;
    await new MonitorScheduler(deps).poll();
    expect(asked.sort()).toEqual([["broke", 3, 3], ["team", 3, 3]]);
    expect((await store.getCrawl(scheduledCheckId("m1", now)))?.options.limit).toBe(2);
    expect((await monitors.listChecks("broke")).map((c) => c.outcome)).toEqual(["no_credits"]);
    expect(await store.getCrawl(scheduledCheckId("broke", now))).toBeNull();
  });
});
