// Politeness: how many fetches may run at once and how far apart they start, per host (shared by every crawl of this
// worker) and per crawl (`maxConcurrency`, `delay`). A fetch waits until every gate it passes through lets it in.

interface Lane {
  running: number;
  nextAt: number;
  waiters: (() => void)[];
}

export interface GateRule {
  key: string;
  maxConcurrent: number;
  spacingMs: number;
}

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

  /** Runs `fn` once every rule admits it. */
  async run<T>(rules: GateRule[], fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const t = this.now();
      const blocked = rules.find((r) => {
        const l = this.lane(r.key);
        return l.running >= r.maxConcurrent || l.nextAt > t;
      });
      if (!blocked) break;
      const l = this.lane(blocked.key);
      await new Promise<void>((resolve) => {
        if (l.running >= blocked.maxConcurrent) l.waiters.push(resolve);
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
        const w = l.waiters.shift();
        if (w) w();
        else if (l.running === 0 && l.nextAt <= this.now()) this.lanes.delete(r.key);
      }
    }
  }
}
