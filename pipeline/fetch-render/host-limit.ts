// Adaptive per-host concurrency (AIMD, as TCP's congestion control and Crawlee's autoscaled pool): a host starts at
// HOST_MAX_CONCURRENCY fetches at once and earns one more per clean answer (slow start) until its first sign of
// strain, then one more per window of `limit` clean answers, up to HOST_MAX_CONCURRENCY_CEILING. A 429, a 503, a
// time-out, a connection error, or a latency that climbs past its baseline halves the limit at once (latency: three
// quarters) and keeps the level that drew it out of reach for `holdMs`, so the host settles just under the load it
// refused instead of being probed again at every window (a strain or a climbing latency within that hold caps it a fifth lower again). Pure: state in, state out, time passed in.

export interface HostLimitOptions {
  /** where every host starts (HOST_MAX_CONCURRENCY) */
  initial: number;
  /** the most it may reach (HOST_MAX_CONCURRENCY_CEILING; below `initial`: no growth) */
  ceiling: number;
  /**
   * latency counts as climbing above baseline × ratio + floor. The floor keeps out what is not the host's: the latency
   * is taken on this process's event loop, which a busy crawl stalls for tens to hundreds of milliseconds at times
   */
  latencyRatio?: number;
  latencyFloorMs?: number;
  /** how long a level that drew a strain signal stays out of reach */
  holdMs?: number;
}

export interface HostLimitState {
  limit: number;
  inFlight: number;
  /** below it the limit grows by one per counted clean answer, at or above it by one per window */
  threshold: number;
  /** clean answers counted since the limit last changed */
  clean: number;
  /** clean answers since the last decrease (a latency is judged over a whole window of them) */
  answers: number;
  /** smoothed latency of clean answers since the last decrease, and the lowest it has been */
  latencyMs: number | null;
  baselineMs: number | null;
  /** the limit may not exceed `cap` before `capUntil` */
  cap: number;
  capUntil: number;
  /** fetches started so far; answers to those started before the last decrease (`decreasedAfter`) do not count */
  started: number;
  decreasedAfter: number;
}

/** What a fetch left: its number among the host's fetches and how many of them ran once it had started. */
export interface FetchTicket {
  seq: number;
  level: number;
}

export type Answer =
  /** a response that is not a sign of strain (2xx-4xx but 429), with its time to the response headers */
  | { kind: "ok"; latencyMs: number }
  /** 429, 503, a time-out, a connection error */
  | { kind: "strain" }
  /** tells nothing about the host's load (a 500, a DNS failure, a refused address) */
  | { kind: "neutral" };

const DEFAULTS = { latencyRatio: 2, latencyFloorMs: 200, holdMs: 60_000 };
/** A strain within the hold of an earlier one caps the limit at this share of the cap in force. */
const REPEAT_CAP_FACTOR = 0.8;
const ALPHA = 0.25;

export function initialHostLimit(opts: HostLimitOptions): HostLimitState {
  const ceiling = Math.max(opts.initial, opts.ceiling);
  return { limit: opts.initial, inFlight: 0, threshold: ceiling, clean: 0, answers: 0, latencyMs: null, baselineMs: null, cap: ceiling, capUntil: 0, started: 0, decreasedAfter: 0 };
}

export function startFetch(s: HostLimitState): { state: HostLimitState; ticket: FetchTicket } {
  const inFlight = s.inFlight + 1;
  return { state: { ...s, inFlight, started: s.started + 1 }, ticket: { seq: s.started + 1, level: inFlight } };
}

/** The limit of the host now. */
export function limitOf(s: HostLimitState): number {
  return s.limit;
}

function decrease(s: HostLimitState, ticket: FetchTicket, factor: number, opts: HostLimitOptions, now: number): HostLimitState {
  // the most fetches the host had while this one ran (at its start, or as many as are still in flight now)
  const peak = Math.max(ticket.level, s.inFlight + 1);
  // a strain while an earlier one's hold is on: the cap it left was still too high. This process counts a fetch in
  // flight until it has handled the answer, later than the host stops counting it (more so on a busy event loop), so
  // one level below the strained fetch's can stay above the host's limit level after level: cap a fifth lower instead
  const again = now < s.capUntil ? Math.floor(s.cap * REPEAT_CAP_FACTOR) : Infinity;
  const cap = Math.max(1, Math.min(peak - 1, again, Math.max(opts.initial, opts.ceiling)));
  const limit = Math.max(1, Math.min(cap, Math.floor(s.limit * factor)));
  return { ...s, limit, threshold: limit, clean: 0, answers: 0, latencyMs: null, cap, capUntil: now + (opts.holdMs ?? DEFAULTS.holdMs), decreasedAfter: s.started };
}

export function endFetch(s0: HostLimitState, ticket: FetchTicket, answer: Answer, opts: HostLimitOptions, now: number): HostLimitState {
  const s = { ...s0, inFlight: Math.max(0, s0.inFlight - 1) };
  if (answer.kind === "neutral") return s;
  const fresh = ticket.seq > s.decreasedAfter;
  if (answer.kind === "strain") return fresh ? decrease(s, ticket, 0.5, opts, now) : s;
  if (!fresh) return s;
  const latencyMs = s.latencyMs === null ? answer.latencyMs : s.latencyMs + ALPHA * (answer.latencyMs - s.latencyMs);
  const baselineMs = s.baselineMs === null ? latencyMs : Math.min(s.baselineMs, latencyMs);
  const next: HostLimitState = { ...s, latencyMs, baselineMs, answers: s.answers + 1 };
  const ratio = opts.latencyRatio ?? DEFAULTS.latencyRatio;
  const floor = opts.latencyFloorMs ?? DEFAULTS.latencyFloorMs;
  // over a window of answers since the last decrease, slower than the host was at its best
  if (next.answers >= next.limit && latencyMs > baselineMs * ratio + floor) {
    // still so at one fetch at a time: the host itself got slower (not our load), and this is its latency now
    if (next.limit === 1) return { ...next, baselineMs: latencyMs };
    return decrease(next, ticket, 0.75, opts, now);
  }
  // only answers of fetches that found the host using at least half its limit tell that the limit can grow (a crawl
  // held to 2 fetches at once by its maxConcurrency says nothing of how the host takes 30)
  if (ticket.level * 2 < next.limit) return next;
  const ceiling = Math.max(opts.initial, opts.ceiling);
  const top = now < next.capUntil ? Math.min(next.cap, ceiling) : ceiling;
  const clean = next.clean + 1;
  if (next.limit >= top) return { ...next, clean };
  if (next.limit < next.threshold || clean >= next.limit) return { ...next, limit: next.limit + 1, clean: 0 };
  return { ...next, clean };
}

/** The hosts of one process: each its own state, created at its first fetch, forgotten when idle and back at the start. */
export class HostLimits {
  private readonly states = new Map<string, HostLimitState>();
  private readonly opts: HostLimitOptions;
  private readonly now: () => number;
  private readonly onChange: (host: string, from: number, to: number, why: Answer["kind"]) => void;

  constructor(opts: HostLimitOptions, now: () => number = Date.now, onChange: (host: string, from: number, to: number, why: Answer["kind"]) => void = () => {}) {
    this.opts = opts;
    this.now = now;
    this.onChange = onChange;
  }

  limit(host: string): number {
    return this.states.get(host)?.limit ?? this.opts.initial;
  }

  start(host: string): FetchTicket {
    const { state, ticket } = startFetch(this.states.get(host) ?? initialHostLimit(this.opts));
    this.states.set(host, state);
    return ticket;
  }

  end(host: string, ticket: FetchTicket, answer: Answer): void {
    const before = this.states.get(host);
    if (!before) return;
    const now = this.now();
    const after = endFetch(before, ticket, answer, this.opts, now);
    if (after.limit !== before.limit) this.onChange(host, before.limit, after.limit, answer.kind);
    // an idle host with nothing learnt is dropped (a crawl of many hosts must not keep one state per host forever)
    if (after.inFlight === 0 && after.limit === this.opts.initial && now >= after.capUntil) this.states.delete(host);
    else this.states.set(host, after);
    if (this.states.size > 10_000) this.states.delete(this.states.keys().next().value as string);
  }
}
