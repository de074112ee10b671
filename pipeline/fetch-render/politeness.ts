// Politeness: how many fetches may run at once and how far apart they start, per host (shared by every crawl of this
// worker) and per crawl (`maxConcurrency`, `delay`). A fetch waits until every gate it passes through lets it in.
// A gate's limit may change between fetches (the host's adaptive limit, host-limit.ts): it is read at each admission.

interface Lane {
  running: number;
  nextAt: number;
  waiters: (() => void)[];
}

export interface GateRule {
  key: string;
  maxConcurrent: number | (() => number);
  spacingMs: number;
}

const maxOf = (r: GateRule): number => (typeof r.maxConcurrent === "number" ? r.maxConcurrent : r.maxConcurrent());

export class Politeness {
  private readonly lanes = new Map<string, Lane>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  private lane(key: string): Lane {
    let l = this.lanes.get(key);
    if (!l) {
      l = { running: 0, nextAt: 0, waiters: [] };
      this.lanes.set(key, l);
    }
    return l;
  }

  /** No fetch of the gate `key` starts for `ms` (a Retry-After holds every fetch of its host, not only the refused one). */
  holdFor(key: string, ms: number): void {
    const l = this.lane(key);
    l.nextAt = Math.max(l.nextAt, this.now() + ms);
  }

  /** Runs `fn` once every rule admits it. */
  async run<T>(rules: GateRule[], fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const t = this.now();
      const blocked = rules.find((r) => {
        const l = this.lane(r.key);
        return l.running >= maxOf(r) || l.nextAt > t;
      });
      if (!blocked) break;
      const l = this.lane(blocked.key);
      await new Promise<void>((resolve) => {
        if (l.running >= maxOf(blocked)) l.waiters.push(resolve);
        else setTimeout(resolve, l.nextAt - t);
      });
    }
    const t = this.now();
    for (const r of rules) {
      const l = this.lane(r.key);
      l.running++;
      l.nextAt = t + r.spacingMs;
    }
    try {
      return await fn();
    } finally {
      for (const r of rules) {
        const l = this.lane(r.key);
        l.running--;
        // as many waiters as there are free places now (a limit that grew frees several), one at least: a woken waiter
        // checks the gate again and waits again if it is still full
        const woken = Math.min(l.waiters.length, Math.max(1, maxOf(r) - l.running));
        for (const w of l.waiters.splice(0, woken)) w();
        if (woken === 0 && l.running === 0 && l.nextAt <= this.now()) this.lanes.delete(r.key);
      }
    }
  }
}
