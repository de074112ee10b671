import { afterEach, describe, expect, it, vi } from "vitest";
import type { MonitorRecord } from "../store/monitor-store.ts";
import { MonitorTicks } from "./monitor-ticks.ts";

const T0 = Date.parse("2026-11-26T10:00:00Z");
const monitor = (schedule: Record<string, unknown>, version = T0): MonitorRecord => ({
  monitorId: "m1", teamId: "t", version, name: "m", status: "active", anchor: T0, createdAt: T0, updatedAt: version,
  body: JSON.stringify({ schedule, targets: [{ type: "crawl", url: "https://example.com/" }] }),
});

afterEach(() => vi.restoreAllMocks());

describe("monitor ticks", () => {
  it("searches a schedule once per tick, not on every poll or listing", () => {
    const ticks = new MonitorTicks();
    const m = monitor({ cron: "0 9 * * MON", timezone: "Europe/Berlin" });
    const spy = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    expect(ticks.isDue(m, 0, T0)).toBe(false);
    const first = spy.mock.calls.length;
    expect(first).toBeGreaterThan(0);
    // a day of 5 s polls and listings before the tick (Monday 30 November 09:00 CET): no search
    for (let now = T0; now < T0 + 86_400_000; now += 5000) expect(ticks.isDue(m, 0, now)).toBe(false);
    expect(ticks.next(m, T0 + 3_600_000)).toBe(Date.parse("2026-11-30T08:00:00Z"));
    expect(spy.mock.calls.length).toBe(first);
    // the tick comes: due; once run (a new last run), the next one is searched
    expect(ticks.isDue(m, 0, Date.parse("2026-11-30T08:00:00Z"))).toBe(true);
    expect(ticks.isDue(m, Date.parse("2026-11-30T08:00:00Z"), Date.parse("2026-11-30T08:00:05Z"))).toBe(false);
    expect(spy.mock.calls.length).toBeGreaterThan(first);
    expect(ticks.next(m, Date.parse("2026-11-30T08:00:05Z"))).toBe(Date.parse("2026-12-07T08:00:00Z"));
  });

  it("searches again when the monitor changes (a new version), and an interval needs no search", () => {
    const ticks = new MonitorTicks();
    expect(ticks.next(monitor({ intervalSeconds: 600 }), T0)).toBe(T0 + 600_000);
    expect(ticks.next(monitor({ intervalSeconds: 900 }, T0 + 1), T0)).toBe(T0 + 900_000);
    expect(ticks.next(monitor({ intervalSeconds: 900 }, T0 + 1), T0 + 900_000)).toBe(T0 + 1_800_000);
  });
});
