// Webhook endpoints: what "one endpoint" is (scheme + host + port: every URL of one server, whichever crawl uses it),
// and the per-process limit of attempts in flight to one endpoint, shared by first attempts, parked events and retries.

/** The endpoint of a webhook URL: its origin (scheme, host and port; a default port is left out), or the URL itself. */
export function endpointOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? url : origin;
  } catch {
    return url;
  }
}

/** A slot of an endpoint; call it once the attempt is over. */
export type Release = () => void;

interface EndpointState {
  inUse: number;
  waiting: ((release: Release) => void)[];
}

/** At most `limit` attempts in flight per endpoint (this process); waiters are served in arrival order. */
export class EndpointSlots {
  private readonly limit: number;
  private readonly endpoints = new Map<string, EndpointState>();

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Attempts in flight to `endpoint`. */
  inUse(endpoint: string): number {
    return this.endpoints.get(endpoint)?.inUse ?? 0;
  }

  /** A slot now, or null when `endpoint` already has `limit` attempts in flight. */
  tryTake(endpoint: string): Release | null {
    const s = this.endpoints.get(endpoint) ?? { inUse: 0, waiting: [] };
    if (s.inUse >= this.limit) return null;
    s.inUse++;
    this.endpoints.set(endpoint, s);
    return this.releaser(endpoint, s);
  }

  /** A slot, once one is free; null if `signal` aborts first. */
  take(endpoint: string, signal: AbortSignal): Promise<Release | null> {
    const now = this.tryTake(endpoint);
    if (now || signal.aborted) return Promise.resolve(now);
    const s = this.endpoints.get(endpoint) as EndpointState;
    return new Promise((resolve) => {
      const onAbort = () => {
        s.waiting = s.waiting.filter((w) => w !== grant);
        resolve(null);
      };
      const grant = (release: Release) => {
        signal.removeEventListener("abort", onAbort);
        resolve(release);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      s.waiting.push(grant);
    });
  }

  private releaser(endpoint: string, s: EndpointState): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = s.waiting.shift();
      // the slot passes straight to the next waiter
      if (next) return next(this.releaser(endpoint, s));
      s.inUse--;
      if (s.inUse === 0) this.endpoints.delete(endpoint);
    };
  }
}
