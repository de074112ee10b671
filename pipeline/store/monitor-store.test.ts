import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EmbeddedMonitorStore, type CheckRow, type MonitorRecord } from "./monitor-store.ts";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const monitor = (version: number, status: MonitorRecord["status"] = "active"): MonitorRecord => ({ monitorId: "m1", teamId: "t", version, name: `v${version}`, status, body: "{}", anchor: 0, createdAt: 1, updatedAt: version });
const check = (checkId: string, tick: number, outcome: CheckRow["outcome"] = "started", trigger: CheckRow["trigger"] = "scheduled"): CheckRow => ({ monitorId: "m1", checkId, teamId: "t", trigger, scheduledFor: tick, createdAt: tick, outcome });

describe("embedded monitor store", () => {
  it("keeps the latest version and each check once, across a reopen", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-monitors-"));
    dirs.push(dir);
    let store = await EmbeddedMonitorStore.open(dir);
    await store.saveMonitor(monitor(2));
    await store.saveMonitor(monitor(1)); // an older version written late does not win
    await store.saveCheck(check("c1", 10, "skipped_overlap"));
    await store.saveCheck(check("c1", 10)); // a replica that started the job: started wins
    await store.saveCheck(check("c1", 10, "skipped_overlap"));
    await store.saveCheck(check("c2", 20));
    await store.saveCheck(check("c3", 25, "started", "manual"));
    await store.close();
    store = await EmbeddedMonitorStore.open(dir);
    expect((await store.getMonitor("m1"))?.name).toBe("v2");
    expect((await store.listChecks("m1")).map((c) => [c.checkId, c.outcome])).toEqual([["c3", "started"], ["c2", "started"], ["c1", "started"]]);
    expect(await store.lastScheduled(["m1", "m2"])).toEqual(new Map([["m1", 20]]));
    await store.saveMonitor(monitor(3, "deleted"));
    expect(await store.listMonitors(null)).toEqual([]);
    expect((await store.getMonitor("m1"))?.status).toBe("deleted");
    await store.close();
  });

  it("claims a monitor's next check once: later claimers of the same `after` get null until it is released or lapses", async () => {
    const dir = mkdtempSync(join(tmpdir(), "trawl-monitors-"));
    dirs.push(dir);
    let now = 1_000;
    const store = await EmbeddedMonitorStore.open(dir, () => now);
    const claims = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claimCheck("m1", "c0", `check-${i}`)));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    const won = claims.find((c) => c !== null) as string;
    expect(await store.claimCheck("m1", "c1", "next")).not.toBeNull(); // another `after`: another claim
    expect(await store.claimCheck("m2", "c0", "x")).not.toBeNull(); // another monitor
    await store.releaseCheck("m1", "c0", "not-the-claim"); // only the holder releases
    expect(await store.claimCheck("m1", "c0", "again")).toBeNull();
    await store.releaseCheck("m1", "c0", won);
    const second = await store.claimCheck("m1", "c0", "again");
    expect(second).not.toBeNull();
    now += 60_000; // a claim whose holder never wrote its check lapses
    expect(await store.claimCheck("m1", "c0", "late")).not.toBeNull();
    await store.close();
  });
});
