// Five-field cron expressions (minute hour day-of-month month day-of-week), pure: parse, then the next matching
// minute after a time, in an IANA timezone. Fields take `*`, numbers, ranges `a-b`, steps `*/n` and `a-b/n`, lists
// `a,b`, month and weekday names (JAN, MON), and 7 for Sunday. Day-of-month and day-of-week follow Vixie cron: when
// both are restricted, a day matching either matches. Written here (≈100 lines, tested beside it) instead of a
// dependency: the monitors need `next` and nothing else.
import { RequestError } from "../runtime/errors.ts";

export interface Cron {
  minute: Set<number>;
  hour: Set<number>;
  dom: Set<number>;
  month: Set<number>;
  dow: Set<number>;
  domAny: boolean;
  dowAny: boolean;
  timezone: string;
}

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
    month: field(mon, 1, 12, MONTHS, 1, expr), dow: days, domAny: dom === "*", dowAny: dow === "*", timezone,
  };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall-clock fields of a time in a timezone. */
function local(ms: number, timezone: string): { month: number; day: number; dow: number; hour: number; minute: number } {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: timezone, hourCycle: "h23", month: "numeric", day: "numeric", weekday: "short", hour: "numeric", minute: "numeric" });
    formatters.set(timezone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return { month: Number(p.month), day: Number(p.day), dow: DAYS.indexOf(String(p.weekday).toUpperCase()), hour: Number(p.hour), minute: Number(p.minute) };
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

/** The first matching minute strictly after `after` (ms), or null within 5 years (e.g. 31 February). */
export function nextCron(c: Cron, after: number): number | null {
  let t = Math.floor(after / MINUTE) * MINUTE + MINUTE;
  const end = after + 5 * 366 * 24 * 60 * MINUTE;
  while (t <= end) {
    const l = local(t, c.timezone);
    const dayOk = c.domAny && c.dowAny ? true : c.domAny ? c.dow.has(l.dow) : c.dowAny ? c.dom.has(l.day) : c.dom.has(l.day) || c.dow.has(l.dow);
    if (!c.month.has(l.month) || !dayOk) {
      t += (24 * 60 - l.hour * 60 - l.minute) * MINUTE; // next local midnight (a DST day is re-checked there)
      continue;
    }
    if (!c.hour.has(l.hour)) {
      t += (60 - l.minute) * MINUTE;
      continue;
    }
    if (!c.minute.has(l.minute)) {
      t += MINUTE;
      continue;
    }
    return t;
  }
  return null;
}
