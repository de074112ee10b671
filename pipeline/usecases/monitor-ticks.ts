// Each monitor's next tick, remembered: the scheduler asks every MONITOR_POLL_MS for every active monitor, and each
// listing for each monitor shown. A remembered tick answers while the monitor's version is the same (a change of
// schedule, anchor or status writes a new version) and the time asked about lies between the search's start and the
// tick, so a poll that finds nothing due costs a map look-up. A schedule with no tick (one stored before such schedules
// were refused) is searched again once a day.
import type { MonitorRecord } from "../store/monitor-store.ts";
import { nextTick, planOf } from "./monitor-schedule.ts";
import { definitionOf } from "./monitors.ts";

const DAY = 86_400_000;
const MAX_ENTRIES = 10_000;

interface Entry { version: number; from: number; next: number | null }

export class MonitorTicks {
  private readonly byMonitor = new Map<string, Entry>();

  /** The monitor's first tick strictly after `after` (interval ticks: anchor + k × interval, k ≥ 1), or null. */
  next(m: MonitorRecord, after: number): number | null {
    const e = this.byMonitor.get(m.monitorId);
    if (e && e.version === m.version && e.from <= after && (e.next === null ? after - e.from < DAY : e.next > after)) return e.next;
    const next = nextTick(planOf(definitionOf(m).schedule), m.anchor, after);
    if (this.byMonitor.size >= MAX_ENTRIES) this.byMonitor.clear();
    this.byMonitor.set(m.monitorId, { version: m.version, from: after, next });
    return next;
  }

  /** Whether a tick after `lastRun` (and the anchor) has come by `now`. */
  isDue(m: MonitorRecord, lastRun: number, now: number): boolean {
    const next = this.next(m, Math.max(m.anchor, lastRun));
    return next !== null && next <= now;
  }
}
