import { afterEach, describe, expect, it, vi } from "vitest";
import { nextCron, parseCron, prevCron } from "./cron.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
/** The next `n` ticks after `from`. */
function ticks(expr: string, timezone: string, from: string, n: number): (string | null)[] {
  const c = parseCron(expr, timezone);
  const out: (string | null)[] = [];
  let t: number | null = at(from);
  for (let i = 0; i < n && t !== null; i++) out.push(iso((t = nextCron(c, t))));
  return out;
}

afterEach(() => vi.restoreAllMocks());

// The 2027 changes: Europe/Berlin 28 March 02:00 -> 03:00 and 31 October 03:00 -> 02:00; America/New_York 14 March
// 02:00 -> 03:00 and 7 November 02:00 -> 01:00; Australia/Sydney (southern) 4 April 03:00 -> 02:00 and 3 October
// 02:00 -> 03:00.
describe("cron across daylight-saving changes", () => {
  it("runs on the first Monday after a spring-forward Sunday (the search crossed the 23-hour day as if it had 24)", () => {
    expect(ticks("30 0 * * 1", "Europe/Berlin", "2027-03-27T00:00:00Z", 2)).toEqual(["2027-03-28T22:30:00.000Z", "2027-04-04T22:30:00.000Z"]); // Mon 29 Mar 00:30 CEST
    expect(ticks("30 0 * * 1", "America/New_York", "2027-03-13T00:00:00Z", 2)).toEqual(["2027-03-15T04:30:00.000Z", "2027-03-22T04:30:00.000Z"]);
    expect(ticks("30 0 * * 1", "Australia/Sydney", "2027-10-02T00:00:00Z", 2)).toEqual(["2027-10-03T13:30:00.000Z", "2027-10-10T13:30:00.000Z"]); // Mon 4 Oct 00:30 AEDT
    expect(ticks("30 0 * * 1-5", "Europe/Berlin", "2027-03-27T00:00:00Z", 1)).toEqual(["2027-03-28T22:30:00.000Z"]);
  });

  it("runs a wall time that a spring-forward change skips at the first instant after the gap, once", () => {
    // 02:30 does not exist on the change's day: 03:00 local, then 02:30 again the next day
    expect(ticks("30 2 * * *", "Europe/Berlin", "2027-03-27T12:00:00Z", 2)).toEqual(["2027-03-28T01:00:00.000Z", "2027-03-29T00:30:00.000Z"]);
    expect(ticks("30 2 * * *", "America/New_York", "2027-03-13T12:00:00Z", 2)).toEqual(["2027-03-14T07:00:00.000Z", "2027-03-15T06:30:00.000Z"]);
    expect(ticks("30 2 * * *", "Australia/Sydney", "2027-10-02T00:00:00Z", 2)).toEqual(["2027-10-02T16:00:00.000Z", "2027-10-03T15:30:00.000Z"]);
    // three skipped times run once, at 03:00
    expect(ticks("*/20 2 * * *", "Europe/Berlin", "2027-03-27T12:00:00Z", 2)).toEqual(["2027-03-28T01:00:00.000Z", "2027-03-29T00:00:00.000Z"]);
    // a job more frequent than hourly goes on from 03:00
    expect(ticks("*/30 * * * *", "Europe/Berlin", "2027-03-28T00:10:00Z", 3)).toEqual(["2027-03-28T00:30:00.000Z", "2027-03-28T01:00:00.000Z", "2027-03-28T01:30:00.000Z"]);
  });

  it("runs a wall time that a fall-back change repeats once; a job more frequent than hourly keeps its rhythm (cronie)", () => {
    // 02:30 CEST (00:30Z) and 02:30 CET (01:30Z) are both 31 October 02:30 in Berlin: only the first runs
    expect(ticks("30 2 * * *", "Europe/Berlin", "2027-10-30T12:00:00Z", 2)).toEqual(["2027-10-31T00:30:00.000Z", "2027-11-01T01:30:00.000Z"]);
    expect(ticks("30 1 * * *", "America/New_York", "2027-11-06T12:00:00Z", 2)).toEqual(["2027-11-07T05:30:00.000Z", "2027-11-08T06:30:00.000Z"]);
    expect(ticks("30 2 * * *", "Australia/Sydney", "2027-04-02T12:00:00Z", 3)).toEqual(["2027-04-02T15:30:00.000Z", "2027-04-03T15:30:00.000Z", "2027-04-04T16:30:00.000Z"]);
    expect(ticks("*/30 * * * *", "Europe/Berlin", "2027-10-30T23:50:00Z", 5)).toEqual([
      "2027-10-31T00:00:00.000Z", "2027-10-31T00:30:00.000Z", "2027-10-31T01:00:00.000Z", "2027-10-31T01:30:00.000Z", "2027-10-31T02:00:00.000Z",
    ]);
  });

  it("finds the latest tick back from a time, with the same rules", () => {
    const c = parseCron("30 2 * * *", "Europe/Berlin");
    expect(iso(prevCron(c, at("2027-10-31T01:45:00Z")))).toBe("2027-10-31T00:30:00.000Z"); // not the repeated 01:30Z
    expect(prevCron(c, at("2027-10-31T01:45:00Z"), at("2027-10-31T00:30:00Z"))).toBeNull(); // ran already: nothing newer
    expect(iso(prevCron(c, at("2027-03-28T05:00:00Z")))).toBe("2027-03-28T01:00:00.000Z"); // the gap's end
    expect(iso(prevCron(c, at("2027-03-28T00:59:00Z")))).toBe("2027-03-27T01:30:00.000Z");
    expect(iso(prevCron(parseCron("*/15 * * * *"), at("2026-11-26T10:14:59Z")))).toBe("2026-11-26T10:00:00.000Z");
    expect(iso(prevCron(parseCron("*/15 * * * *"), at("2026-11-26T10:15:00Z")))).toBe("2026-11-26T10:15:00.000Z");
  });
});

describe("cron search cost", () => {
  /** Timezone look-ups made by `f` (the searches' only costly step: the old minute-by-minute walk made one per day or hour). */
  function lookups(f: () => unknown): number {
    const spy = vi.spyOn(Intl.DateTimeFormat.prototype, "formatToParts");
    f();
    const n = spy.mock.calls.length;
    spy.mockRestore();
    return n;
  }

  it("is bounded however rare the expression: by field, not minute by minute", () => {
    // 29 February (once in four years), in a zone with changes: a handful of look-ups, not one per day for two years
    const leap = parseCron("0 0 29 2 *", "Europe/Berlin");
    let next: number | null = null;
    expect(lookups(() => (next = nextCron(leap, at("2026-03-01T00:00:00Z"))))).toBeLessThanOrEqual(10);
    expect(iso(next)).toBe("2028-02-28T23:00:00.000Z");
    expect(lookups(() => prevCron(leap, at("2031-01-01T00:00:00Z")))).toBeLessThanOrEqual(10);
    // never (31 February): no day matches, no look-up beyond the start
    const never = parseCron("0 0 31 2 *", "America/New_York");
    expect(lookups(() => expect(nextCron(never, at("2026-01-01T00:00:00Z"))).toBeNull())).toBeLessThanOrEqual(2);
    expect(lookups(() => expect(prevCron(never, at("2026-01-01T00:00:00Z"))).toBeNull())).toBeLessThanOrEqual(2);
    // and a frequent one stays cheap too
    expect(lookups(() => nextCron(parseCron("* * * * *", "Australia/Sydney"), at("2026-11-26T10:00:30Z")))).toBeLessThanOrEqual(10);
  });

  it("looks ten years ahead: the rarest valid expression (29 February across 2100) is found", () => {
    expect(iso(nextCron(parseCron("0 0 29 2 *"), at("2097-03-01T00:00:00Z")))).toBe("2104-02-29T00:00:00.000Z");
  });
});
