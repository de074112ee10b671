// The monitors' clock: every MONITOR_POLL_MS each API process reads the active monitors and runs the tick that is
// due (the latest one not run: ticks missed while every process was down run once). Every API replica polls; a
// tick's check id is derived from the monitor and the tick, so replicas that fire the same tick start one job.
import { planOf, dueTick } from "./monitor-schedule.ts";
import { definitionOf, runCheck, scheduledCheckId, type MonitorDeps } from "./monitors.ts";

export class MonitorScheduler {
  private readonly deps: MonitorDeps;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(deps: MonitorDeps) {
    this.deps = deps;
  }

  /** One look: runs each active monitor's due tick. Returns the checks it ran (skipped overlaps included). */
  async poll(): Promise<number> {
    const { monitors, clock, log } = this.deps;
    const active = (await monitors.listMonitors(null)).filter((m) => m.status === "active");
    if (active.length === 0) return 0;
    const last = await monitors.lastScheduled(active.map((m) => m.monitorId));
    const now = clock.now();
    let ran = 0;
    for (const m of active) {
      try {
        const tick = dueTick(planOf(definitionOf(m).schedule), m.anchor, last.get(m.monitorId) ?? 0, now);
        if (tick === null) continue;
        await runCheck(this.deps, m, scheduledCheckId(m.monitorId, tick), "scheduled", tick);
        ran++;
      } catch (err) {
        // a store or bus failure: the tick stays due and the next poll tries again
        log.warn({ monitorId: m.monitorId, err: (err as Error).message }, "monitor tick not run; will retry");
      }
    }
    return ran;
  }

  start(pollMs: number): void {
    this.timer = setInterval(() => {
      if (this.polling) return; // a slow poll is not overlapped by the next one
      this.polling = this.poll().then(
        () => undefined,
        (err) => this.deps.log.warn({ err: (err as Error).message }, "monitor poll failed; will retry"),
      ).finally(() => (this.polling = null));
    }, pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }
}
