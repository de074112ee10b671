// When a monitor runs, pure. A schedule is a five-field cron expression, Firecrawl's schedule text (turned into cron
// here), or a plain interval (Trawl's `intervalSeconds`, ticks at anchor + k × interval). Every replica that reads the
// same monitor computes the same ticks, so a tick's time names the run (monitor id + tick -> the check's id).
import { checkTimezone, HORIZON_YEARS, nextCron, parseCron, prevCron, type Cron } from "./cron.ts";
import { RequestError } from "../runtime/errors.ts";

export interface ScheduleSpec {
  cron?: string;
  text?: string;
  timezone?: string;
  intervalSeconds?: number;
}

export type Plan = { kind: "interval"; everyMs: number } | { kind: "cron"; cron: Cron; expr: string };

const badSchedule = (why: string, field = "schedule") => new RequestError(why, [{ code: "custom", path: field === "schedule" ? ["schedule"] : ["schedule", field], message: why }]);

/**
 * Firecrawl's schedule texts as cron: `every N minutes [starting at :MM]`, `every minute`, `hourly` / `every hour`,
 * `every N hours`, `daily`, `daily at 9:00` / `9am` / `5:30 PM`, `weekly` (Mondays at 00:00).
 */
export function textToCron(text: string): string {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ");
  let m: RegExpExecArray | null;
  if ((m = /^every (\d+) minutes?(?: starting at :(\d\d?))?$/.exec(t))) {
    const n = Number(m[1]);
    if (n < 1 || n > 59) throw badSchedule(`"${text}": minutes between 1 and 59`, "text");
    return m[2] !== undefined ? `${Number(m[2]) % 60}-59/${n} * * * *` : `*/${n} * * * *`;
  }
  if (t === "every minute") return "* * * * *";
  if (t === "hourly" || t === "every hour") return "0 * * * *";
  if ((m = /^every (\d+) hours?$/.exec(t))) {
    const n = Number(m[1]);
    if (n < 1 || n > 23) throw badSchedule(`"${text}": hours between 1 and 23`, "text");
    return `0 */${n} * * *`;
  }
  if (t === "daily" || t === "every day") return "0 0 * * *";
  if ((m = /^daily at (\d\d?)(?::(\d\d))? ?(am|pm)?$/.exec(t))) {
    let h = Number(m[1]);
    const min = Number(m[2] ?? 0);
    if (m[3] && (h < 1 || h > 12)) throw badSchedule(`"${text}": an hour between 1 and 12 with am/pm`, "text");
    if (m[3] === "pm" && h < 12) h += 12;
    if (m[3] === "am" && h === 12) h = 0;
    if (h > 23 || min > 59) throw badSchedule(`"${text}": not a time of day`, "text");
    return `${min} ${h} * * *`;
  }
  if (t === "weekly" || t === "every week") return "0 0 * * 1";
  throw badSchedule(`Unsupported schedule text "${text}" (e.g. "every 30 minutes", "hourly", "daily at 9am", "weekly"; or give cron)`, "text");
}

/** The plan of a schedule; a RequestError (400) when it is not exactly one of cron, text and intervalSeconds. */
export function planOf(s: ScheduleSpec): Plan {
  const given = [s.cron, s.text, s.intervalSeconds].filter((x) => x !== undefined).length;
  if (given !== 1) throw badSchedule("schedule needs exactly one of cron, text and intervalSeconds");
  const timezone = s.timezone ?? "UTC";
  checkTimezone(timezone);
  if (s.intervalSeconds !== undefined) return { kind: "interval", everyMs: s.intervalSeconds * 1000 };
  const expr = s.cron ?? textToCron(s.text as string);
  return { kind: "cron", cron: parseCron(expr, timezone), expr };
}

/** The first tick strictly after `after`; interval ticks are anchor + k × interval (k ≥ 1). */
export function nextTick(plan: Plan, anchor: number, after: number): number | null {
  if (plan.kind === "cron") return nextCron(plan.cron, Math.max(after, anchor));
  const k = Math.max(1, Math.floor((after - anchor) / plan.everyMs) + 1);
  return anchor + k * plan.everyMs;
}

/**
 * The tick to run now: the latest tick in (max(anchor, lastRun), now], or null. Ticks missed while nothing ran are
 * not run one by one: only the latest of them runs (once, on start).
 */
export function dueTick(plan: Plan, anchor: number, lastRun: number, now: number): number | null {
  const floor = Math.max(anchor, lastRun);
  if (plan.kind === "interval") {
    const k = Math.floor((now - anchor) / plan.everyMs);
    const t = anchor + k * plan.everyMs;
    return k >= 1 && t > floor ? t : null;
  }
  // cron: one search back from now (by field, bounded), not a walk forward over every tick since the floor
  return prevCron(plan.cron, now, floor);
}

/** A schedule that never runs (31 February) is refused: a 400 naming its field. */
export function checkRuns(s: ScheduleSpec, plan: Plan, now: number): void {
  if (nextTick(plan, now, now) !== null) return;
  const field = s.cron !== undefined ? "cron" : "text";
  throw new RequestError(`schedule.${field}: "${s.cron ?? s.text}" never runs in the next ${HORIZON_YEARS} years`, [
    { code: "custom", path: ["schedule", field], message: `no matching time in the next ${HORIZON_YEARS} years (e.g. a day the month does not have)` },
  ]);
}

/** The shortest gap between the next `n` ticks from `from` (checked against the minimum interval). */
export function shortestGap(plan: Plan, from: number, n = 50): number {
  if (plan.kind === "interval") return plan.everyMs;
  let gap = Infinity;
  let prev = nextCron(plan.cron, from);
  for (let i = 0; i < n && prev !== null; i++) {
    const next = nextCron(plan.cron, prev);
    if (next === null) break;
    gap = Math.min(gap, next - prev);
    prev = next;
  }
  return gap;
}
