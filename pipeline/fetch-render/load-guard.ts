// The load guard: how many pages a worker (fetch-render, render) runs at once, adapted to the load every interval.
// It slows, it never stops (memory aside): the limit moves between a floor (LOAD_GUARD_MIN_CONCURRENCY) and the stage's
// concurrency, and every page waits only for a slot under it.
// - MAX_CPU not set (the default): the load of the others counts, not Trawl's own (this process, every thread, and its
//   own servers on this machine: own-servers.ts). Trawl is entitled to its fair share of a busy machine (half) or to
//   what the others leave of it up to AUTO_BUSY, whichever is more. While the machine is at least AUTO_BUSY busy and
//   others use at least NEIGHBOUR_MIN of it, a Trawl using more than its entitlement lowers its limit in proportion
//   (limit x entitled / own); otherwise the limit grows back (doubling per interval, up to the stage's concurrency).
//   A hog on every core takes the cores the kernel gives it; Trawl keeps its share and its pages move on.
// - MAX_CPU set: the spec's threshold on the whole machine's (or cgroup's) use, whoever uses it. Above it the limit
//   falls in proportion (limit x MAX_CPU / cpu) down to the floor; a floor of 0 holds every new page (the spec's "rejects
//   new jobs above it"). Below it, it grows back.
// - MAX_RAM: memory over it holds every new page, whatever the floor (a page in flight is memory, and a process the
//   kernel kills for memory loses every page it had), until it drops.
import type { LoadSample } from "./load-sampler.ts";

export { loadSource, systemSampler, type LoadSample } from "./load-sampler.ts";

/** MAX_CPU not set: the machine counts as busy from here on */
export const AUTO_BUSY = 0.9;
/** MAX_CPU not set: the share of a busy machine Trawl keeps however much others want (Trawl and the others: two parties) */
export const FAIR_SHARE = 0.5;
/** MAX_CPU not set: others below this share of the machine are noise (system daemons, the shell), not a neighbour */
export const NEIGHBOUR_MIN = 0.1;
/** a Trawl over its entitlement by less than this is at it (no change for measurement noise) */
const TOLERANCE = 0.03;

/** Why the limit is below the stage's concurrency: none (it is not), neighbours, max_cpu or memory. */
export type LoadReason = "none" | "neighbours" | "max_cpu" | "memory";
export const LOAD_REASONS: readonly LoadReason[] = ["none", "neighbours", "max_cpu", "memory"];

export interface LoadLimits {
  /** LOAD_GUARD_MIN_CONCURRENCY (at most the ceiling): CPU load never takes the limit below it */
  floor: number;
  /** the stage's concurrency */
  ceiling: number;
  maxCpu: number | null;
  maxRam: number;
}

export interface LoadState {
  limit: number;
  reason: LoadReason;
}

/** Trawl's entitlement with MAX_CPU not set: its fair share, or what the others leave up to AUTO_BUSY if more. */
export function entitlement(s: LoadSample): number {
  const own = Math.min(s.own ?? 0, s.cpu);
  return Math.max(FAIR_SHARE, AUTO_BUSY - (s.cpu - own));
}

/** The next limit and its reason, from the current one and a sample (pure: the guard calls it every interval). */
export function adapt(state: LoadState, s: LoadSample, l: LoadLimits): LoadState {
  const floor = Math.min(l.floor, l.ceiling);
  const clamp = (n: number) => Math.min(l.ceiling, Math.max(floor, n));
  const lower = (factor: number, reason: LoadReason): LoadState => {
    const limit = clamp(Math.floor(state.limit * factor));
    return { limit, reason: limit >= l.ceiling ? "none" : reason };
  };
  const grow = (factor: number): LoadState => {
    const limit = clamp(Math.max(state.limit + 1, Math.floor(state.limit * Math.min(2, factor))));
    return { limit, reason: limit >= l.ceiling ? "none" : state.reason };
  };
  if (s.ram > l.maxRam) return { limit: 0, reason: "memory" };
  if (l.maxCpu !== null) return s.cpu > l.maxCpu ? lower(l.maxCpu / s.cpu, "max_cpu") : grow(2);
  const own = Math.min(s.own ?? 0, s.cpu);
  const others = s.cpu - own;
  if (s.cpu < AUTO_BUSY || others < NEIGHBOUR_MIN) return grow(2);
  const entitled = entitlement(s);
  if (own > entitled + TOLERANCE) return lower(entitled / own, "neighbours");
  return grow(own > 0 ? entitled / own : 2);
}

export interface LoadChange extends LoadState {
  previous: LoadState;
  sample: LoadSample;
}

export class LoadGuard {
  private readonly limits: LoadLimits;
  private readonly sample: () => LoadSample;
  private readonly intervalMs: number;
  private readonly onChange: (c: LoadChange) => void;
  private state: LoadState;
  private sampledAt = -Infinity;
  private running = 0;
  private readonly waiters: (() => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * `onChange`: called when the limit or its reason changes (the log says each change of reason once; /metrics shows
   * the limit). The first sample is taken at the first page, then at most once per interval.
   */
  constructor(opts: { limits: LoadLimits; sample: () => LoadSample; intervalMs?: number; onChange?: (c: LoadChange) => void }) {
    this.limits = opts.limits;
    this.sample = opts.sample;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.onChange = opts.onChange ?? (() => {});
    this.state = { limit: opts.limits.ceiling, reason: "none" };
  }

  /** The pages this worker runs at once now, and why not more. */
  current(): LoadState & { running: number } {
    return { ...this.state, running: this.running };
  }

  private tick(): void {
    const now = performance.now();
    if (now - this.sampledAt < this.intervalMs) return;
    this.sampledAt = now;
    const sample = this.sample();
    const previous = this.state;
    this.state = adapt(previous, sample, this.limits);
    if (this.state.limit !== previous.limit || this.state.reason !== previous.reason) this.onChange({ ...this.state, previous, sample });
    this.wake();
  }

  private wake(): void {
    for (let free = this.state.limit - this.running; free > 0 && this.waiters.length; free--) this.waiters.shift()!();
  }

  /** While pages wait, the load is sampled every interval (a limit held by memory grows back without a page ending). */
  private arm(): void {
    if (this.timer || this.waiters.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.tick();
      this.arm();
    }, Math.max(this.intervalMs, 10));
    this.timer.unref?.();
  }

  /**
   * Resolves once this page may start (at once while fewer than the limit run), with the function that ends it:
   * call it when the page's work here is done. An aborted signal resolves at once (its release does nothing).
   */
  async admit(signal?: AbortSignal): Promise<() => void> {
    this.tick();
    while (this.running >= this.state.limit) {
      if (signal?.aborted) return () => {};
      await new Promise<void>((resolve) => {
        const waiter = () => {
          signal?.removeEventListener("abort", abort);
          resolve();
        };
        const abort = () => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          resolve();
        };
        this.waiters.push(waiter);
        signal?.addEventListener("abort", abort, { once: true });
        this.arm();
      });
      this.tick();
    }
    this.running++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running--;
      this.tick();
      this.wake();
    };
  }
}

/** A reason logged again within this time after its last warning is a flap of the same episode (logged at debug). */
export const LOG_QUIET_MS = 60_000;

/**
 * The level of the log line of a change: a new reason is a warning, the return to the stage's concurrency is info,
 * steps within a reason are debug. A guard at the edge of its entitlement flaps (16 -> 15 -> 16 every few seconds):
 * a reason warned about less than LOG_QUIET_MS ago, and the return that follows it, go to debug.
 */
export function changeLogger(nowMs: () => number = Date.now): (c: LoadChange) => "warn" | "info" | "debug" {
  const warnedAt = new Map<LoadReason, number>();
  let quiet = false;
  return (c) => {
    if (c.reason === c.previous.reason) return "debug";
    if (c.reason === "none") return quiet ? "debug" : "info";
    const last = warnedAt.get(c.reason);
    quiet = last !== undefined && nowMs() - last < LOG_QUIET_MS;
    if (quiet) return "debug";
    warnedAt.set(c.reason, nowMs());
    return "warn";
  };
}
