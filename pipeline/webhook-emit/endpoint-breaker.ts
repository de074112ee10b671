// A webhook URL that keeps failing is suspended for a while: first attempts share an ordered partition with other
// crawls' events, and an endpoint that never answers would cost that partition WEBHOOK_TIMEOUT_MS per event (a crawl
// of 1,000 pages: hours). After SUSPEND_AFTER failures in a row, attempts to the URL are not made until the
// suspension ends; each one counts as a failed attempt (logged, retried with its usual delay, given up after
// WEBHOOK_MAX_ATTEMPTS), so what a dead endpoint costs is bounded: SUSPEND_AFTER time limits per suspension, and at
// most WEBHOOK_MAX_ATTEMPTS records per event. The first attempt after a suspension is a real one: a success ends it.
// Per process (each webhook-emit replica learns on its own).

/** Failures in a row that suspend a URL. */
export const SUSPEND_AFTER = 3;
/** URLs remembered at most (the oldest forgotten first). */
const MAX_URLS = 10_000;

export class EndpointBreaker {
  private readonly urls = new Map<string, { failures: number; until: number }>();
  private readonly suspendMs: number;

  /** `suspendMs`: how long a failing URL is suspended (the first retry delay: a retry finds it open again). */
  constructor(suspendMs: number) {
    this.suspendMs = suspendMs;
  }

  /** Until when attempts to `url` are not made (0: they are). */
  suspendedUntil(url: string, now: number): number {
    const s = this.urls.get(url);
    return s && s.until > now ? s.until : 0;
  }

  /** The outcome of a real attempt: a success forgets the URL; a failure counts, and suspends it at SUSPEND_AFTER. */
  record(url: string, ok: boolean, now: number): void {
    if (ok) {
      this.urls.delete(url);
      return;
    }
    const s = this.urls.get(url) ?? { failures: 0, until: 0 };
    this.urls.delete(url);
    s.failures++;
    if (s.failures >= SUSPEND_AFTER) s.until = now + this.suspendMs;
    this.urls.set(url, s);
    if (this.urls.size > MAX_URLS) this.urls.delete(this.urls.keys().next().value as string);
  }
}
