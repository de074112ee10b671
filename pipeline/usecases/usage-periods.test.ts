import { describe, expect, it } from "vitest";
import { monthlyPeriods, monthOf } from "./usage-periods.ts";

const at = (iso: string) => Date.parse(iso);

describe("monthlyPeriods", () => {
  it("sums each field per UTC calendar month, oldest first, leaving out months and jobs without usage", () => {
    const jobs = [
      { credits: 5, tokens: 120, at: at("2026-03-31T23:59:59.999Z") },
      { credits: 1, tokens: 0, at: at("2026-01-15T10:00:00Z") },
      { credits: 2, tokens: 30, at: at("2026-03-01T00:00:00Z") },
      { credits: 0, tokens: 7, at: at("2026-04-01T00:00:00Z") },
    ];
    expect(monthlyPeriods(jobs, "credits")).toEqual([
      { startDate: "2026-01-01T00:00:00.000Z", endDate: "2026-01-31T23:59:59.999Z", used: 1 },
      { startDate: "2026-03-01T00:00:00.000Z", endDate: "2026-03-31T23:59:59.999Z", used: 7 },
    ]);
    expect(monthlyPeriods(jobs, "tokens")).toEqual([
      { startDate: "2026-03-01T00:00:00.000Z", endDate: "2026-03-31T23:59:59.999Z", used: 150 },
      { startDate: "2026-04-01T00:00:00.000Z", endDate: "2026-04-30T23:59:59.999Z", used: 7 },
    ]);
    expect(monthlyPeriods([], "credits")).toEqual([]);
  });

  it("knows December and leap Februaries", () => {
    expect(monthOf(at("2026-12-31T12:00:00Z"))).toEqual({ start: at("2026-12-01T00:00:00Z"), end: at("2027-01-01T00:00:00Z") - 1 });
    expect(new Date(monthOf(at("2028-02-10T00:00:00Z")).end).toISOString()).toBe("2028-02-29T23:59:59.999Z");
  });
});
