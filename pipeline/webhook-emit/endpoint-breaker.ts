// A webhook endpoint (scheme + host + port, endpoints.ts) that keeps failing is suspended for a while: after
// SUSPEND_AFTER failures in a row, attempts to it are not made until the suspension ends; each one counts as a failed
// attempt (logged, retried with its usual delay, given up after WEBHOOK_MAX_ATTEMPTS), so what a dead endpoint costs
// is bounded: SUSPEND_AFTER time limits per suspension, and at most WEBHOOK_MAX_ATTEMPTS records per event. Counted per
// endpoint, not per URL: the many URLs of one dead server (one per crawl, say) share its failures instead of each one
// costing its own time limits again. The first attempt after a suspension is a real one: a success ends it.
// Per process (each webhook-emit replica learns on its own).

/** Failures in a row that suspend an endpoint. */
export const SUSPEND_AFTER = 3;
/** Endpoints remembered at most (the oldest forgotten first). */
const MAX_ENDPOINTS = 10_000;

export class EndpointBreaker {
  private readonly endpoints = new Map<string, { failures: number; until: number }>();
  private readonly suspendMs: number;

  /** `suspendMs`: how long a failing endpoint is suspended (the first retry delay: a retry finds it open again). */
  constructor(suspendMs: number) {
    this.suspendMs = suspendMs;
  }

  /** Until when attempts to `endpoint` are not made (0: they are). */
  suspendedUntil(endpoint: string, now: number): number {
    const s = this.endpoints.get(endpoint);
    return s && s.until > now ? s.until : 0;
  }

  /** The outcome of a real attempt: a success forgets the endpoint; a failure counts, and suspends it at SUSPEND_AFTER. */
  record(endpoint: string, ok: boolean, now: number): void {
    if (ok) {
      this.endpoints.delete(endpoint);
      return;
    }
    const s = this.endpoints.get(endpoint) ?? { failures: 0, until: 0 };
    this.endpoints.delete(endpoint);
    s.failures++;
    if (s.failures >= SUSPEND_AFTER) s.until = now + this.suspendMs;
    this.endpoints.set(endpoint, s);
    if (this.endpoints.size > MAX_ENDPOINTS) this.endpoints.delete(this.endpoints.keys().next().value as string);
  }
}
