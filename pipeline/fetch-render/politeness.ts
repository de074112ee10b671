// Politeness: how many fetches may run at once and how far apart they start, per host (shared by every crawl of this
// worker; fetch.tasks is keyed by host, so this worker is the host's only one) and per crawl (`maxConcurrency`,
// `delay`). A fetch waits until every gate it passes through lets it in. A gate's limit may change between fetches (the
// host's adaptive limit, host-limit.ts): it is read at each admission.
//
// The first rule of a fetch is its queue (the host): fetches waiting for it take turns by crawl (fair-turns.ts), so
// no crawl waits behind all the pages of a larger one; the other rules (the crawl's own gate) only say whether its
// turn can be taken now, and a crawl whose own gate is full lets the next crawl go. Each host has its own queue and
// its own timer: a host paused by a Retry-After or a Crawl-delay holds no other host's fetches.
import { FairTurns } from "./fair-turns.ts";

export interface GateRule {
  key: string;
  maxConcurrent: number | (() => number);
  spacingMs: number;
}

/** A wait for a gate that was given up (it waited `maxWaitMs`, or `giveUpWaiting`): the fetch did not start. */
export class GateWaitAborted extends Error {
  readonly reason: unknown;

  constructor(reason: unknown) {
    super("gave up waiting for the host's turn");
    this.reason = reason;
  }
}

interface Waiter {
  rules: GateRule[];
  admitted: () => void;
  /** `taken`: already out of the queue */
  gaveUp: (reason: unknown, taken?: boolean) => void;
}

/** The reason of a wait that lasted `maxWaitMs`. */
export const WAITED_TOO_LONG = "waited too long";

interface Gate {
  running: number;
  nextAt: number;
  /** fetches waiting with this gate as their first rule */
  queue: FairTurns<Waiter>;
  timer: ReturnType<typeof setTimeout> | null;
  timerAt: number;
  /** queue gates (hosts) with a waiter that also passes this gate (a crawl's): looked at again when it frees */
  dependents: Set<string>;
  /** a waiter was passed over because this gate was full: its dependents are looked at when a place frees (only then) */
  blocked: boolean;
}

const maxOf = (r: GateRule): number => (typeof r.maxConcurrent === "number" ? r.maxConcurrent : r.maxConcurrent());

export class Politeness {
  private readonly gates = new Map<string, Gate>();
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  private gate(key: string): Gate {
    let g = this.gates.get(key);
    if (!g) {
      g = { running: 0, nextAt: 0, queue: new FairTurns(), timer: null, timerAt: 0, dependents: new Set(), blocked: false };
      this.gates.set(key, g);
    }
    return g;
  }

  /** A gate with nothing running, waiting or held is forgotten (a crawl of many hosts must not keep one each). */
  private forget(key: string, g: Gate): void {
    if (g.running !== 0 || g.queue.size !== 0 || g.timer !== null || g.nextAt > this.now()) return;
    for (const dep of g.dependents) if (!this.gates.get(dep)?.queue.size) g.dependents.delete(dep);
    if (g.dependents.size === 0) this.gates.delete(key);
  }

  /** No fetch of the gate `key` starts for `ms` (a Retry-After holds every fetch of its host, not only the refused one). */
  holdFor(key: string, ms: number): void {
    const g = this.gate(key);
    g.nextAt = Math.max(g.nextAt, this.now() + ms);
    this.dispatch(key);
  }

  /** Fetches running through the gate `key` now. */
  running(key: string): number {
    return this.gates.get(key)?.running ?? 0;
  }

  /** Fetches waiting for the gate `key` (as their first rule). */
  waiting(key: string): number {
    return this.gates.get(key)?.queue.size ?? 0;
  }

  private admits(rules: GateRule[], t: number): boolean {
    for (let i = 0; i < rules.length; i++) {
      const r = rules[i] as GateRule;
      const g = this.gates.get(r.key);
      if (!g) continue;
      const full = g.running >= maxOf(r);
      if (!full && g.nextAt <= t) continue;
      if (i > 0 && full) g.blocked = true;
      return false;
    }
    return true;
  }

  private enter(rules: GateRule[], t: number): void {
    for (const r of rules) {
      const g = this.gate(r.key);
      g.running++;
      g.nextAt = Math.max(g.nextAt, t + r.spacingMs);
    }
  }

  /** Lets in the waiters of queue gate `key` that may go now, in turn; arms its timer for the next that waits on time. */
  private dispatch(key: string): void {
    const g = this.gates.get(key);
    if (!g) return;
    const t = this.now();
    for (let w = g.queue.take((x) => this.admits(x.rules, t)); w; w = g.queue.take((x) => this.admits(x.rules, t))) {
      this.enter(w.rules, t);
      w.admitted();
    }
    // the soonest a waiter's gates open by time (a full gate opens when a fetch ends, which dispatches again)
    let soonest = Infinity;
    for (const head of g.queue.heads()) {
      let at = t;
      for (const r of head.rules) {
        const rg = this.gates.get(r.key);
        if (rg && rg.nextAt > at) at = rg.nextAt;
      }
      if (at > t) soonest = Math.min(soonest, at);
    }
    if (soonest !== Infinity && (g.timer === null || soonest < g.timerAt)) {
      if (g.timer) clearTimeout(g.timer);
      g.timerAt = soonest;
      g.timer = setTimeout(() => {
        g.timer = null;
        this.dispatch(key);
        this.forget(key, g);
      }, soonest - t);
    }
  }

  /**
   * Runs `fn` once every rule admits it. `turn`: whose turn it takes among the waiters of its first rule (the crawl).
   * `maxWaitMs`: gives up waiting after that long (rejects with GateWaitAborted(WAITED_TOO_LONG); a started fetch runs on).
   */
  async run<T>(rules: GateRule[], fn: () => Promise<T>, opts: { turn?: string; maxWaitMs?: number } = {}): Promise<T> {
    const [first] = rules;
    if (!first) return fn();
    const queueKey = first.key;
    const q = this.gate(queueKey);
    const t = this.now();
    if (q.queue.size === 0 && this.admits(rules, t)) this.enter(rules, t);
    else await this.wait(queueKey, q, rules, opts.turn ?? "", opts.maxWaitMs);
    try {
      return await fn();
    } finally {
      this.leave(rules);
    }
  }

  private wait(queueKey: string, q: Gate, rules: GateRule[], turn: string, maxWaitMs?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // a timer only for a fetch that waits (timers of one duration are one list in Node: O(1) each)
      const timer = maxWaitMs === undefined ? undefined : setTimeout(() => waiter.gaveUp(WAITED_TOO_LONG), maxWaitMs);
      const waiter: Waiter = {
        rules,
        admitted: () => {
          clearTimeout(timer);
          resolve();
        },
        gaveUp: (reason, taken = false) => {
          clearTimeout(timer);
          if (!taken && !q.queue.remove(waiter)) return;
          reject(new GateWaitAborted(reason));
          this.forget(queueKey, q);
        },
      };
      q.queue.push(turn, waiter);
      for (const r of rules.slice(1)) this.gate(r.key).dependents.add(queueKey);
      this.dispatch(queueKey);
    });
  }

  /** Every fetch waiting for a gate gives up (rejects with GateWaitAborted(reason)): a rebalance, a stop. */
  giveUpWaiting(reason: unknown): void {
    for (const g of [...this.gates.values()]) for (const w of g.queue.drain()) w.gaveUp(reason, true);
  }

  private leave(rules: GateRule[]): void {
    const [first] = rules;
    for (const r of rules) this.gate(r.key).running--;
    if (first) this.dispatch(first.key);
    // a crawl's gate that freed a place after it held a waiter back: the hosts where that crawl waits may let it in now
    // (not at every fetch's end: a crawl waits on thousands of hosts, and its gate is seldom full)
    for (const r of rules.slice(1)) {
      const g = this.gates.get(r.key);
      if (!g?.blocked) continue;
      g.blocked = false;
      for (const dep of [...g.dependents]) {
        const d = this.gates.get(dep);
        if (!d || d.queue.size === 0) g.dependents.delete(dep);
        else this.dispatch(dep);
      }
    }
    for (const r of rules) {
      const g = this.gates.get(r.key);
      if (g) this.forget(r.key, g);
    }
  }
}
