// Starting checks under a claim, over the real embedded bus and stores: concurrent runs start one check (the others
// busy), a run after it ended starts a new one, a run that fails gives its claim up, a tick never starts while another
// start holds the claim, and a pause leaves no tick starting after it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EmbeddedBus } from "../runtime/embedded-bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { loadConfig } from "../runtime/config.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { EmbeddedMonitorStore, type MonitorRecord } from "../store/monitor-store.ts";
import { manualCheckId, runNow, runTick, withoutNewChecks } from "./monitor-claim.ts";
import { scheduledCheckId, type MonitorDeps } from "./monitors.ts";
import { CreditsError } from "./team-access.ts";

const T0 = Date.parse("2026-11-26T10:00:00Z");
const log = createLogger("silent");
let dir = "";
let bus: EmbeddedBus;
let store: EmbeddedCrawlStore;
let monitors: EmbeddedMonitorStore;
let deps: MonitorDeps;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "trawl-claim-"));
  bus = await EmbeddedBus.open({ partitions: 2, dir, log });
  store = await EmbeddedCrawlStore.open(dir, T0);
  monitors = await EmbeddedMonitorStore.open(dir);
  deps = { store, bus, clock: { now: () => T0 }, log, monitors, config: loadConfig({ ALLOW_PRIVATE_CRAWL_TARGETS: "true" }) };
});

afterEach(async () => {
  await bus.close();
  await store.close();
  await monitors.close();
  rmSync(dir, { recursive: true, force: true });
});

const m: MonitorRecord = {
  monitorId: "m1", teamId: "team", version: T0, name: "m1", status: "active", anchor: T0, createdAt: T0, updatedAt: T0,
  body: JSON.stringify({ schedule: { intervalSeconds: 60 }, targets: [{ type: "crawl", url: "http://127.0.0.1:9/", crawlOptions: { limit: 3 } }] }),
};
const end = async (id: string) => {
  const job = await store.getCrawl(id);
  await store.saveCrawls([{ ...(job as NonNullable<typeof job>), version: 1, status: "completed", completedAt: T0 }]);
};

describe("monitor check claims", () => {
  it("ten concurrent runs start one check; a run after it ended starts a new one", async () => {
    await monitors.saveMonitor(m);
    const runs = await Promise.all(Array.from({ length: 10 }, () => runNow(deps, m)));
    const started = runs.filter((r) => r.outcome === "started");
    expect(started.map((r) => r.checkId)).toEqual([manualCheckId("m1", "")]);
    expect(runs.filter((r) => r.outcome === "busy")).toHaveLength(9);
    expect((await monitors.listChecks("m1")).map((c) => c.checkId)).toEqual([manualCheckId("m1", "")]);
    expect((await runNow(deps, m)).outcome).toBe("busy"); // still running
    await end(manualCheckId("m1", ""));
    const next = await runNow(deps, m);
    expect(next).toEqual({ checkId: manualCheckId("m1", manualCheckId("m1", "")), outcome: "started" });
  });

  it("a run that fails (no credits) gives its claim up: the next run is not held", async () => {
    await monitors.saveMonitor(m);
    deps.admit = async () => {
      throw new CreditsError();
    };
    await expect(runNow(deps, m)).rejects.toBeInstanceOf(CreditsError);
    delete deps.admit;
    expect(await runNow(deps, m)).toEqual({ checkId: manualCheckId("m1", ""), outcome: "started" });
  });

  it("a tick waits while a run holds the claim; a pause leaves no tick starting after it", async () => {
    await monitors.saveMonitor(m);
    const tick = T0 + 60_000;
    // a run being started holds the claim: the tick is busy (no row: it stays due)
    const claim = await monitors.claimCheck("m1", "", "someone");
    expect(await runTick(deps, m, tick)).toEqual({ checkId: null, outcome: "busy" });
    expect(await monitors.listChecks("m1")).toEqual([]);
    await monitors.releaseCheck("m1", "", claim as string);
    // paused while the poll that read the monitor active was on its way: the tick reads it again under the claim
    await withoutNewChecks(deps, m, () => monitors.saveMonitor({ ...m, status: "paused", version: T0 + 1 }));
    expect(await runTick(deps, m, tick)).toEqual({ checkId: null, outcome: "busy" });
    expect(await store.getCrawl(scheduledCheckId("m1", tick))).toBeNull();
    // resumed (a new anchor): a tick of the new anchor runs
    const resumed = { ...m, version: T0 + 2, anchor: T0 + 30_000 };
    await monitors.saveMonitor(resumed);
    expect(await runTick(deps, resumed, T0 + 90_000)).toEqual({ checkId: scheduledCheckId("m1", T0 + 90_000), outcome: "started" });
  });
});
