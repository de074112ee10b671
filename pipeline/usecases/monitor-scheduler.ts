// The monitors' clock: every MONITOR_POLL_MS each API process reads the active monitors and runs the tick that is
// due (the latest one not run: ticks missed while every process was down run once). Every API replica polls; a tick
// starts under a claim (monitor-claim.ts) and its check id is derived from the monitor and the tick, so replicas that
// fire the same tick start one job. Each monitor's next tick is remembered (MonitorTicks): a poll that finds nothing
// due searches no schedule.
import { planOf, dueTick } from "./monitor-schedule.ts";
import { runTick } from "./monitor-claim.ts";
import { MonitorTicks } from "./monitor-ticks.ts";
import { definitionOf, type MonitorDeps } from "./monitors.ts";

export class MonitorScheduler {
  private readonly deps: MonitorDeps;
  private readonly ticks = new MonitorTicks();
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
    // the due monitors start at once: a claim in ClickHouse waits for the others' (CLAIM_SETTLE_MS)
    const ran = await Promise.all(active.map(async (m) => {
      try {
        const lastRun = last.get(m.monitorId) ?? 0;
        if (!this.ticks.isDue(m, lastRun, now)) return 0;
        const tick = dueTick(planOf(definitionOf(m).schedule), m.anchor, lastRun, now);
        if (tick === null) return 0;
        const started = await runTick(this.deps, m, tick);
        if (started.outcome === "busy") log.debug({ monitorId: m.monitorId, tick: new Date(tick).toISOString() }, "monitor tick claimed by another check; will retry");
        return started.outcome === "busy" ? 0 : 1;
      } catch (err) {
        // a store or bus failure: the tick stays due and the next poll tries again
        log.warn({ monitorId: m.monitorId, err: (err as Error).message }, "monitor tick not run; will retry");
        return 0;
      }
    }));
    return ran.reduce((a: number, b) => a + b, 0);
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
