// Failed authentications per client address (AUTH_FAILURE_LIMIT per AUTH_FAILURE_WINDOW_MS, per API process): past the
// limit an address's requests get 429 with Retry-After before any key is hashed (key-verifier.ts asks its gate
// before each hash). The API names the address (api/auth.ts, clientAddress); here it is an opaque string.
import type { AttemptGate } from "./key-verifier.ts";

const MAX_ADDRESSES = 100_000;

export class FailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly now: () => number;

  /** `limit` 0: no limit. */
  constructor(limit: number, windowMs: number, now: () => number) {
    this.limit = limit;
    this.windowMs = windowMs;
    this.now = now;
  }

  /** Seconds before `address` may present a key again (0: now). */
  wait(address: string): number {
    const w = this.windows.get(address);
    if (this.limit === 0 || !w) return 0;
    const left = w.start + this.windowMs - this.now();
    if (left <= 0) {
      this.windows.delete(address);
      return 0;
    }
    return w.failures >= this.limit ? Math.max(1, Math.ceil(left / 1000)) : 0;
  }

  failed(address: string): void {
    if (this.limit === 0) return;
    const now = this.now();
    let w = this.windows.get(address);
    if (!w || now - w.start >= this.windowMs) {
      this.windows.delete(address);
      if (this.windows.size >= MAX_ADDRESSES) this.sweep(now);
      w = { start: now, failures: 0 };
      this.windows.set(address, w);
    }
    w.failures++;
  }

  gate(address: string): AttemptGate {
    return { wait: () => this.wait(address), failed: () => this.failed(address) };
  }

  /** Drops ended windows (the map is in order of start); if all are live, the oldest: memory stays bounded. */
  private sweep(now: number): void {
    for (const [address, w] of this.windows) {
      if (now - w.start < this.windowMs) break;
      this.windows.delete(address);
    }
    if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value as string);
  }
}
