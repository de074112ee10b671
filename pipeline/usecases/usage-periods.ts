// The historical usage of GET /v2/team/credit-usage/historical and /token-usage/historical: a team's jobs summed
// per calendar month (UTC) of the time each job is counted at (a crawl: its creation; a scrape, map, search or
// extract job: its end). Trawl has no billing cycle (a team has one balance, not a monthly plan), so the periods are
// the calendar months in which usage was recorded, oldest first, months without usage left out.
import type { JobUsage } from "../store/crawl-store.ts";

export interface UsagePeriod {
  startDate: string;
  endDate: string;
  used: number;
}

/** The first millisecond of the UTC month of `at`, and the last. */
export function monthOf(at: number): { start: number; end: number } {
  const d = new Date(at);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { start, end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - 1 };
}

export function monthlyPeriods(jobs: JobUsage[], field: "credits" | "tokens"): UsagePeriod[] {
  const months = new Map<number, number>();
  for (const job of jobs) {
    if (job[field] <= 0) continue;
    const { start } = monthOf(job.at);
    months.set(start, (months.get(start) ?? 0) + job[field]);
  }
  return [...months.entries()].sort((a, b) => a[0] - b[0]).map(([start, used]) => ({
    startDate: new Date(start).toISOString(),
    endDate: new Date(monthOf(start).end).toISOString(),
    used,
  }));
}
