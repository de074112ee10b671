// Five-field cron expressions (minute hour day-of-month month day-of-week), pure: parse, then the next (or latest)
// matching minute around a time, in an IANA timezone. Fields take `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`,
// lists `a,b`, month and weekday names (JAN, MON), and 7 for Sunday. Day-of-month and day-of-week follow Vixie cron:
// when both are restricted, a day matching either matches. Written here (tested beside it) instead of a dependency.
//
// The search walks the calendar by field (years, the expression's months, the days that match, then its hours and
// minutes), not minute by minute: its cost is bounded by HORIZON_YEARS x 12 months x 31 days of arithmetic and a few
// timezone look-ups per matching day, however rare the expression (31 February costs ~400 steps and no look-up).
// Wall times and instants (cronie's rules for local-time changes): a wall time that a spring-forward change skips runs at
// the first instant after the gap; a wall time that a fall-back change repeats runs once, at its first occurrence,
// unless the minute or hour field starts with `*` (cronie's jobs "more frequent than hourly", scheduled by the clock):
// those run at each real occurrence, so an every-15-minutes schedule keeps its rhythm through the repeated hour.
import { RequestError } from "../runtime/errors.ts";

export interface Cron {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domAny: boolean;
  dowAny: boolean;
  /** the minute or hour field starts with `*`: each real occurrence of a repeated wall time runs */
  wild: boolean;
  timezone: string;
}

/** How far the searches look: an expression that matches no minute this far ahead is refused (monitor-schedule.ts). */
export const HORIZON_YEARS = 10;

const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

const bad = (expr: string, why: string) => new RequestError(`Invalid cron expression "${expr}": ${why}`, [{ code: "custom", path: ["schedule", "cron"], message: why }]);

function value(text: string, names: string[] | null, offset: number, expr: string): number {
  const i = names ? names.indexOf(text.toUpperCase()) : -1;
  if (i >= 0) return i + offset;
  if (!/^\d+$/.test(text)) throw bad(expr, `"${text}" is not a number`);
  return Number(text);
}

function field(text: string, min: number, max: number, names: string[] | null, offset: number, expr: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(",")) {
    const [range, stepText] = part.split("/") as [string, string | undefined];
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw bad(expr, `bad step in "${part}"`);
    let lo: number;
    let hi: number;
    if (range === "*") [lo, hi] = [min, max];
    else if (range.includes("-")) {
      const [a, b] = range.split("-") as [string, string];
      [lo, hi] = [value(a, names, offset, expr), value(b, names, offset, expr)];
    } else {
      lo = value(range, names, offset, expr);
      hi = stepText === undefined ? lo : max;
    }
    if (lo < min || hi > max || lo > hi) throw bad(expr, `"${part}" is outside ${min}-${max}`);
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

/** Parses a five-field expression; a RequestError (400) names what is wrong. */
export function parseCron(expr: string, timezone = "UTC"): Cron {
  const parts = expr.trim().split(/\s+/);
  if (parts.length !== 5) throw bad(expr, "five fields are needed (minute hour day-of-month month day-of-week)");
  const [mi, h, dom, mon, dow] = parts as [string, string, string, string, string];
  const days = field(dow, 0, 7, DAYS, 0, expr);
  if (days.has(7)) days.add(0);
  days.delete(7);
  return {
    minute: field(mi, 0, 59, null, 0, expr), hour: field(h, 0, 23, null, 0, expr), dom: field(dom, 1, 31, null, 0, expr),
    month: field(mon, 1, 12, MONTHS, 1, expr), dow: days, domAny: dom === "*", dowAny: dow === "*", wild: mi.startsWith("*") || h.startsWith("*"), timezone,
  };
}

/** Throws a 400 when the timezone is not one Intl knows. */
export function checkTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    throw new RequestError(`Unknown timezone "${timezone}"`, [{ code: "custom", path: ["schedule", "timezone"], message: "an IANA timezone, e.g. UTC or Europe/Paris" }]);
  }
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The timezone's offset at an instant (local wall time minus UTC, ms): the one Intl look-up of the searches. */
function offsetAt(ms: number, timezone: string): number {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: timezone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
    formatters.set(timezone, f);
  }
  const p: Record<string, number> = {};
  for (const x of f.formatToParts(new Date(ms))) if (x.type !== "literal") p[x.type] = Number(x.value);
  const wall = Date.UTC(p.year as number, (p.month as number) - 1, p.day, (p.hour as number) % 24, p.minute, p.second);
  return wall - (ms - (((ms % 1000) + 1000) % 1000));
}

/**
 * How the wall times of one local day map to instants: offset `a` before the instant `change`, `b` from it on (no
 * change near the day: a === b). The window spans every instant whose local date can be this day (offsets -12 h..+14 h).
 */
interface DayZone { a: number; b: number; change: number }

const zones = new Map<string, DayZone>();

function dayZone(wallMidnight: number, timezone: string): DayZone {
  const key = `${timezone} ${wallMidnight}`;
  let z = zones.get(key);
  if (!z) {
    if (zones.size >= 4096) zones.clear();
    z = findZone(wallMidnight, timezone);
    zones.set(key, z);
  }
  return z;
}

function findZone(wallMidnight: number, timezone: string): DayZone {
  let lo = wallMidnight - 15 * HOUR;
  let hi = wallMidnight + 39 * HOUR;
  const a = offsetAt(lo, timezone);
  const b = offsetAt(hi, timezone);
  if (a === b) return { a, b, change: Infinity };
  // the first minute with the new offset (changes happen on whole minutes)
  lo = Math.floor(lo / MINUTE) * MINUTE;
  hi = Math.ceil(hi / MINUTE) * MINUTE;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / MINUTE / 2) * MINUTE;
    if (offsetAt(mid, timezone) === a) lo = mid;
    else hi = mid;
  }
  return { a, b, change: hi };
}

/** The instants a wall time (ms, as if UTC) runs at: one; none in a gap but the gap's end; two in a repeat when wild. */
function instants(wall: number, z: DayZone, wild: boolean): number[] {
  if (z.change === Infinity) return [wall - z.a];
  const before = wall - z.a;
  const after = wall - z.b;
  const beforeOk = before < z.change;
  const afterOk = after >= z.change;
  if (beforeOk && afterOk) return wild ? [before, after] : [before];
  if (beforeOk) return [before];
  if (afterOk) return [after];
  return [z.change];
}

const sorted = (s: Set<number>, desc: boolean) => [...s].sort((x, y) => (desc ? y - x : x - y));

function dayMatches(c: Cron, y: number, m: number, d: number): boolean {
  if (c.domAny && c.dowAny) return true;
  const dow = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  if (c.domAny) return c.dow.has(dow);
  if (c.dowAny) return c.dom.has(d);
  return c.dom.has(d) || c.dow.has(dow);
}

const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** The wall midnight (ms, as if UTC) of an instant's local date, `days` later. */
function localMidnight(ms: number, timezone: string, days: number): number {
  const wall = ms + offsetAt(ms, timezone);
  return Math.floor(wall / DAY) * DAY + days * DAY;
}

/**
 * Walks the local days from a wall midnight, forward or back, for at most HORIZON_YEARS, skipping months outside the
 * expression at once; `visit` gets each matching day's wall midnight and answers a result to stop with.
 */
function walkDays(c: Cron, start: number, back: boolean, visit: (wallMidnight: number) => number | null | undefined): number | null {
  const s = new Date(start);
  const y0 = s.getUTCFullYear();
  let [y, m, d] = [y0, s.getUTCMonth() + 1, s.getUTCDate()];
  const step = back ? -1 : 1;
  while (Math.abs(y - y0) <= HORIZON_YEARS) {
    if (!c.month.has(m) || d < 1 || d > daysIn(y, m)) {
      m += step;
      if (m > 12) [y, m] = [y + 1, 1];
      if (m < 1) [y, m] = [y - 1, 12];
      d = back ? daysIn(y, m) : 1;
      continue;
    }
    if (dayMatches(c, y, m, d)) {
      const found = visit(Date.UTC(y, m - 1, d));
      if (found !== undefined) return found;
    }
    d += step;
  }
  return null;
}

/** The first matching minute strictly after `after` (ms), or null when none comes within HORIZON_YEARS. */
export function nextCron(c: Cron, after: number): number | null {
  const hours = sorted(c.hour, false);
  const minutes = sorted(c.minute, false);
  // from the day before: a fall-back change at midnight steps the local date back
  return walkDays(c, localMidnight(after, c.timezone, -1), false, (midnight) => {
    const z = dayZone(midnight, c.timezone);
    let best = Infinity;
    for (const h of hours) {
      const last = instants(midnight + h * HOUR + 59 * MINUTE, z, c.wild);
      if (Math.max(...last) <= after) continue; // the whole hour is before `after`
      for (const mi of minutes) {
        const at = instants(midnight + h * HOUR + mi * MINUTE, z, c.wild);
        if ((at[0] as number) > best) return best; // every later wall time runs later still
        for (const t of at) if (t > after && t < best) best = t;
      }
    }
    return best === Infinity ? undefined : best;
  });
}

/** The latest matching minute in (`floor`, `at`], or null (looked for back to `floor`, at most HORIZON_YEARS). */
export function prevCron(c: Cron, at: number, floor = -Infinity): number | null {
  const hours = sorted(c.hour, true);
  const minutes = sorted(c.minute, true);
  return walkDays(c, localMidnight(at, c.timezone, 1), true, (midnight) => {
    if (midnight + DAY + 14 * HOUR <= floor) return null; // every instant of this day and before is at or before the floor
    const z = dayZone(midnight, c.timezone);
    let best = -Infinity;
    for (const h of hours) {
      if ((instants(midnight + h * HOUR, z, c.wild)[0] as number) > at) continue; // the whole hour is after `at`
      for (const mi of minutes) {
        const ts = instants(midnight + h * HOUR + mi * MINUTE, z, c.wild);
        if ((ts[ts.length - 1] as number) < best) return best > floor ? best : null;
        for (const t of ts) if (t <= at && t > best) best = t;
      }
    }
    return best === -Infinity ? undefined : best > floor ? best : null;
  });
}
