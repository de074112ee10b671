import { describe, expect, it } from "vitest";
import { nextCron, parseCron } from "./cron.ts";
import { checkRuns, dueTick, nextTick, planOf, shortestGap, textToCron } from "./monitor-schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

describe("cron", () => {
  it("finds the next matching minute, strictly after the time", () => {
    const c = parseCron("*/15 * * * *");
    expect(iso(nextCron(c, at("2026-11-26T10:00:00Z")))).toBe("2026-11-26T10:15:00.000Z");
    expect(iso(nextCron(c, at("2026-11-26T10:14:59Z")))).toBe("2026-11-26T10:15:00.000Z");
    expect(iso(nextCron(c, at("2026-11-26T23:50:00Z")))).toBe("2026-11-27T00:00:00.000Z");
  });

  it("takes ranges with steps, lists, names, and 7 for Sunday", () => {
    expect(iso(nextCron(parseCron("7-59/15 * * * *"), at("2026-11-26T10:08:00Z")))).toBe("2026-11-26T10:22:00.000Z");
    expect(iso(nextCron(parseCron("0 9 * * MON,wed"), at("2026-11-26T10:00:00Z")))).toBe("2026-11-30T09:00:00.000Z"); // 26 Nov 2026 is a Thursday
    expect(iso(nextCron(parseCron("30 6 * * 7"), at("2026-11-26T10:00:00Z")))).toBe("2026-11-29T06:30:00.000Z");
    expect(iso(nextCron(parseCron("0 0 1 JAN *"), at("2026-11-26T10:00:00Z")))).toBe("2027-01-01T00:00:00.000Z");
  });

  it("matches either day field when both are restricted (Vixie cron)", () => {
    // the 1st of the month or a Friday: Friday 27 Nov comes first
    expect(iso(nextCron(parseCron("0 12 1 * FRI"), at("2026-11-26T13:00:00Z")))).toBe("2026-11-27T12:00:00.000Z");
  });

  it("runs in the schedule's timezone, across a DST change", () => {
    // 9:00 in Paris is 08:00 UTC in winter
    expect(iso(nextCron(parseCron("0 9 * * *", "Europe/Paris"), at("2026-11-26T10:00:00Z")))).toBe("2026-11-27T08:00:00.000Z");
    // the night of 29 March 2026 skips 02:00-03:00 in Paris: 9:00 is 07:00 UTC from then on
    expect(iso(nextCron(parseCron("0 9 * * *", "Europe/Paris"), at("2026-03-29T00:00:00Z")))).toBe("2026-03-29T07:00:00.000Z");
  });

  it("refuses malformed expressions with a 400 that says why", () => {
    for (const bad of ["* * * *", "60 * * * *", "* 24 * * *", "*/0 * * * *", "5-1 * * * *", "x * * * *", "* * * FOO *"]) {
      expect(() => parseCron(bad), bad).toThrow(/Invalid cron expression/);
    }
    expect(nextCron(parseCron("0 0 31 2 *"), at("2026-01-01T00:00:00Z"))).toBeNull();
  });
});

describe("schedule", () => {
  it("turns Firecrawl's schedule texts into cron", () => {
    expect(textToCron("every 30 minutes")).toBe("*/30 * * * *");
    expect(textToCron("every 15 minutes starting at :07")).toBe("7-59/15 * * * *");
    expect(textToCron("hourly")).toBe("0 * * * *");
    expect(textToCron("every 2 hours")).toBe("0 */2 * * *");
    expect(textToCron("daily")).toBe("0 0 * * *");
    expect(textToCron("daily at 9:00")).toBe("0 9 * * *");
    expect(textToCron("daily at 9am")).toBe("0 9 * * *");
    expect(textToCron("daily at 5:30 PM")).toBe("30 17 * * *");
    expect(textToCron("daily at 12am")).toBe("0 0 * * *");
    expect(textToCron("weekly")).toBe("0 0 * * 1");
    expect(() => textToCron("whenever")).toThrow(/Unsupported schedule text/);
  });

  it("needs exactly one of cron, text and intervalSeconds, and a known timezone", () => {
    expect(() => planOf({})).toThrow(/exactly one/);
    expect(() => planOf({ cron: "* * * * *", intervalSeconds: 60 })).toThrow(/exactly one/);
    expect(() => planOf({ cron: "* * * * *", timezone: "Mars/Olympus" })).toThrow(/Unknown timezone/);
    expect(planOf({ intervalSeconds: 5 })).toEqual({ kind: "interval", everyMs: 5000 });
  });

  it("interval ticks lie on anchor + k × interval", () => {
    const plan = planOf({ intervalSeconds: 10 });
    expect(nextTick(plan, 1000, 1000)).toBe(11_000);
    expect(nextTick(plan, 1000, 11_000)).toBe(21_000);
    expect(nextTick(plan, 1000, 12_345)).toBe(21_000);
    expect(nextTick(plan, 1000, 0)).toBe(11_000);
  });

  it("the due tick is the latest one not run: missed ticks run once, not once each", () => {
    const plan = planOf({ intervalSeconds: 10 });
    expect(dueTick(plan, 0, 0, 9_999)).toBeNull(); // not yet
    expect(dueTick(plan, 0, 0, 10_000)).toBe(10_000);
    expect(dueTick(plan, 0, 10_000, 15_000)).toBeNull(); // ran already
    expect(dueTick(plan, 0, 10_000, 95_000)).toBe(90_000); // 2..9 missed while down: one run, the latest tick
    expect(dueTick(plan, 0, 90_000, 95_000)).toBeNull();
    // a monitor resumed at 95 s (its anchor moved): the ticks of its pause are not run
    expect(dueTick(plan, 95_000, 90_000, 104_000)).toBeNull();
    expect(dueTick(plan, 95_000, 90_000, 105_000)).toBe(105_000);
  });

  it("cron: the due tick is the latest match since the last run, also after a long outage", () => {
    const plan = planOf({ cron: "*/15 * * * *" });
    const t0 = at("2026-11-26T10:00:00Z");
    expect(dueTick(plan, t0, 0, at("2026-11-26T10:14:00Z"))).toBeNull();
    expect(iso(dueTick(plan, t0, 0, at("2026-11-26T10:16:00Z")))).toBe("2026-11-26T10:15:00.000Z");
    expect(dueTick(plan, t0, at("2026-11-26T10:15:00Z"), at("2026-11-26T10:29:00Z"))).toBeNull();
    expect(iso(dueTick(plan, t0, at("2026-11-26T10:15:00Z"), at("2026-12-26T10:29:00Z")))).toBe("2026-12-26T10:15:00.000Z");
    // a yearly job after two years down: its latest tick, found before the last 8 days
    const yearly = planOf({ cron: "0 0 1 1 *" });
    expect(iso(dueTick(yearly, at("2024-06-01T00:00:00Z"), 0, at("2026-11-26T10:00:00Z")))).toBe("2026-01-01T00:00:00.000Z");
  });

  it("cron: a tick repeated by a fall-back change is due once, a skipped one at the gap's end", () => {
    const plan = planOf({ cron: "30 2 * * *", timezone: "Europe/Berlin" });
    const anchor = at("2027-10-01T00:00:00Z");
    expect(iso(dueTick(plan, anchor, at("2027-10-30T00:30:00Z"), at("2027-10-31T00:31:00Z")))).toBe("2027-10-31T00:30:00.000Z");
    // 02:30 CET (01:30Z) is the same wall time again: nothing is due after the 02:30 CEST run
    expect(dueTick(plan, anchor, at("2027-10-31T00:30:00Z"), at("2027-10-31T01:31:00Z"))).toBeNull();
    expect(iso(dueTick(plan, at("2027-03-01T00:00:00Z"), at("2027-03-27T01:30:00Z"), at("2027-03-28T01:00:00Z")))).toBe("2027-03-28T01:00:00.000Z");
  });

  it("refuses a schedule that never runs with a 400 naming its field", () => {
    const now = at("2026-11-26T10:00:00Z");
    for (const cron of ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4,6,9,11 *"]) {
      let err: unknown;
      try {
        checkRuns({ cron }, planOf({ cron }), now);
      } catch (e) {
        err = e;
      }
      expect(err, cron).toMatchObject({ code: "BAD_REQUEST", issues: [{ path: ["schedule", "cron"] }] });
      expect(String(err), cron).toMatch(/never runs in the next 10 years/);
    }
    // rare but valid: 29 February; and 31 February or a Monday (Vixie: either day field)
    expect(() => checkRuns({ cron: "0 0 29 2 *" }, planOf({ cron: "0 0 29 2 *" }), now)).not.toThrow();
    expect(() => checkRuns({ cron: "0 0 31 2 1" }, planOf({ cron: "0 0 31 2 1" }), now)).not.toThrow();
    expect(() => checkRuns({ intervalSeconds: 600 }, planOf({ intervalSeconds: 600 }), now)).not.toThrow();
  });

  it("measures the shortest gap between ticks (for the minimum interval)", () => {
    expect(shortestGap(planOf({ cron: "0,5 * * * *" }), 0)).toBe(5 * 60_000); // :00 -> :05
    expect(shortestGap(planOf({ text: "every 30 minutes" }), 0)).toBe(30 * 60_000);
    expect(shortestGap(planOf({ intervalSeconds: 3 }), 0)).toBe(3000);
  });
});
