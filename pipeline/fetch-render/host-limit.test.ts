import { describe, expect, it } from "vitest";
import { endFetch, HostLimits, initialHostLimit, startFetch, type Answer, type FetchTicket, type HostLimitOptions } from "./host-limit.ts";

/** A simulated host: how it answers a fetch that finds `level` fetches (itself included) in flight. */
type SimHost = (level: number) => { ms: number; answer: Answer["kind"] };

/**
 * Runs the controller against a host with an endless backlog of fetches, in simulated time: as many fetches start as
 * the limit allows, each ends when the host answers. `turnMs` > 0: the controller sees answers only every `turnMs`
 * (a busy event loop handles them in bursts, and starts fetches only between them), all that came in the meantime
 * together. Returns the limit and the fetches in flight over time, the strains, and the decreases.
 */
function simulate(host: SimHost, opts: HostLimitOptions, durationMs: number, turnMs = 0) {
  let state = initialHostLimit(opts);
  const pending: { at: number; ticket: FetchTicket; answer: Answer }[] = [];
  const trace: { t: number; limit: number; inFlight: number }[] = [];
  let strains = 0;
  let answers = 0;
  let decreases = 0;
  let t = 0;
  while (t < durationMs) {
    while (state.inFlight < state.limit) {
      const started = startFetch(state);
      state = started.state;
      const { ms, answer } = host(started.ticket.level);
      pending.push({ at: t + ms, ticket: started.ticket, answer: answer === "ok" ? { kind: "ok", latencyMs: ms } : { kind: answer } });
    }
    trace.push({ t, limit: state.limit, inFlight: state.inFlight });
    pending.sort((a, b) => a.at - b.at);
    const first = (pending[0] as (typeof pending)[number]).at;
    t = turnMs > 0 ? Math.ceil(first / turnMs) * turnMs : first;
    while (pending.length > 0 && (pending[0] as (typeof pending)[number]).at <= t) {
      const next = pending.shift() as (typeof pending)[number];
      if (next.answer.kind === "strain") strains++;
      answers++;
      const before = state.limit;
      state = endFetch(state, next.ticket, next.answer, opts, t);
      if (state.limit < before) decreases++;
      if (turnMs === 0) break; // one answer, then fetches start again (as the controller runs without bursts)
    }
  }
  const after = (from: number) => trace.filter((x) => x.t >= from);
  return { state, trace, strains, answers, decreases, after, maxInFlight: (from: number) => Math.max(...after(from).map((x) => x.inFlight)) };
}

const OPTS = { initial: 4, ceiling: 32 };

describe("adaptive per-host concurrency", () => {
  it("a fast host: grows to the ceiling within a second and stays there", () => {
    const run = simulate(() => ({ ms: 5, answer: "ok" }), OPTS, 10_000);
    expect(run.after(1000).every((x) => x.limit === 32)).toBe(true);
    expect(run.strains).toBe(0);
  });

  it("a slow host that is slow at any concurrency (a distant server): grows to the ceiling as well", () => {
    const run = simulate(() => ({ ms: 800, answer: "ok" }), OPTS, 60_000);
    expect(run.state.limit).toBe(32);
    expect(run.after(10_000).every((x) => x.limit === 32)).toBe(true);
  });

  it("a host whose latency climbs with concurrency (300 ms a page, 4 at once, the rest queued): settles within 3x its capacity", () => {
    const run = simulate((level) => ({ ms: 300 * Math.max(1, level / 4), answer: "ok" }), OPTS, 300_000);
    const settled = run.after(60_000);
    expect(Math.max(...settled.map((x) => x.limit))).toBeLessThanOrEqual(12);
    expect(Math.min(...settled.map((x) => x.limit))).toBeGreaterThanOrEqual(4);
  });

  it("a host that answers 429 above 6 fetches at once: settles at or under 6, with a bounded number of 429s", () => {
    const host: SimHost = (level) => (level > 6 ? { ms: 2, answer: "strain" } : { ms: 20, answer: "ok" });
    const run = simulate(host, OPTS, 30_000);
    // it found the level: above its start, never above the host's once settled
    expect(run.maxInFlight(2000)).toBe(6);
    expect(run.after(2000).every((x) => x.inFlight <= 6)).toBe(true);
    expect(run.strains).toBeLessThanOrEqual(5);
    expect(run.answers).toBeGreaterThan(5000);
    // probing again once a minute (the hold) costs at most one 429 per fetch the host allows, not a storm
    const long = simulate(host, OPTS, 600_000);
    expect(long.strains).toBeLessThanOrEqual(10 * 6);
    expect(long.strains / long.answers).toBeLessThan(0.001);
  });

  it("a host that answers 429 above 12 at once, counted 0-3 fetches lower than the controller counts: two episodes of 429s, not one per level", () => {
    // this process counts a fetch until it has handled the answer, the host only until it sent it: the host sees 0-3
    // fewer fetches than the fetch's level. Capping one level below each strained fetch stepped down 16 -> 15 -> 14 ->
    // 13 -> 12 (four episodes, each 429s and, on a real host, a Retry-After pause); a strain within the hold of the
    // last one caps a fifth lower
    for (let hostSeed = 1; hostSeed <= 10; hostSeed++) {
      let seed = hostSeed;
      const random = () => ((seed = (seed ^ (seed << 13)) >>> 0), (seed = (seed ^ (seed >>> 17)) >>> 0), (seed = (seed ^ (seed << 5)) >>> 0), seed / 4294967296);
      // most often 3 fewer, rarely the same: a level just over the host's strains now and then, not at once
      const lower = () => {
        const r = random();
        return r < 0.02 ? 0 : r < 0.05 ? 1 : r < 0.1 ? 2 : 3;
      };
      const host: SimHost = (level) => (level - lower() > 12 ? { ms: 1, answer: "strain" } : { ms: 5, answer: "ok" });
      const run = simulate(host, { initial: 4, ceiling: 16 }, 30_000, 20);
      expect(run.decreases, `host ${hostSeed}`).toBeLessThanOrEqual(2);
      expect(run.maxInFlight(10_000)).toBeLessThanOrEqual(12);
      expect(run.maxInFlight(10_000)).toBeGreaterThanOrEqual(9); // not far below what the host allows
    }
  });

  it("a failing host (every fetch times out): down to one fetch at a time, and stays there", () => {
    const run = simulate(() => ({ ms: 30_000, answer: "strain" }), OPTS, 600_000);
    expect(run.after(60_000).every((x) => x.limit === 1)).toBe(true);
  });

  it("a fetch that started before a decrease does not decrease the limit again (one halving per episode)", () => {
    let s = initialHostLimit({ initial: 8, ceiling: 8 });
    const tickets: FetchTicket[] = [];
    for (let i = 0; i < 8; i++) {
      const started = startFetch(s);
      s = started.state;
      tickets.push(started.ticket);
    }
    for (const t of tickets) s = endFetch(s, t, { kind: "strain" }, { initial: 8, ceiling: 8 }, 10);
    expect(s.limit).toBe(4);
    expect(s.inFlight).toBe(0);
  });

  it("the ceiling at or below the start: the limit never grows", () => {
    const run = simulate(() => ({ ms: 5, answer: "ok" }), { initial: 4, ceiling: 4 }, 5000);
    expect(run.trace.every((x) => x.limit === 4)).toBe(true);
  });

  it("answers that tell nothing of the load (500, DNS) neither grow nor shrink the limit", () => {
    const run = simulate(() => ({ ms: 5, answer: "neutral" }), OPTS, 5000);
    expect(run.trace.every((x) => x.limit === 4)).toBe(true);
  });

  it("HostLimits: hosts apart, an idle host at its start forgotten, changes reported", () => {
    let now = 0;
    const changes: string[] = [];
    const hosts = new HostLimits({ initial: 2, ceiling: 4 }, () => now, (host, from, to, why) => changes.push(`${host} ${from}->${to} ${why}`));
    const a = [hosts.start("a"), hosts.start("a")];
    now = 10;
    hosts.end("a", a[1] as FetchTicket, { kind: "ok", latencyMs: 10 });
    expect(hosts.limit("a")).toBe(3);
    expect(hosts.limit("b")).toBe(2);
    const b = hosts.start("b");
    hosts.end("b", b, { kind: "strain" });
    expect(hosts.limit("b")).toBe(1);
    hosts.end("a", a[0] as FetchTicket, { kind: "strain" });
    expect(changes).toEqual(["a 2->3 ok", "b 2->1 strain", "a 3->1 strain"]);
  });
});
