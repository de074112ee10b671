import { describe, expect, it } from "vitest";
import { GateWaitAborted, Politeness, WAITED_TOO_LONG } from "./politeness.ts";
import { parseRobots } from "./robots.ts";

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("Politeness", () => {
  it("reads a gate's limit at each admission: a limit that grows lets the waiters in at once", async () => {
    const gate = new Politeness();
    let limit = 1;
    let running = 0;
    let peak = 0;
    const fetch = async () => {
      running++;
      peak = Math.max(peak, running);
      await tick(20);
      limit = 3; // the host answered well: its limit grew while this fetch ran
      running--;
    };
    await Promise.all(Array.from({ length: 7 }, () => gate.run([{ key: "host:a", maxConcurrent: () => limit, spacingMs: 0 }], fetch)));
    expect(peak).toBe(3);
  });

  it("holdFor: no fetch of the gate starts before the hold ends (Retry-After holds the whole host)", async () => {
    const gate = new Politeness();
    gate.holdFor("host:a", 150);
    const t0 = Date.now();
    const starts: number[] = [];
    await Promise.all([1, 2, 3].map(() => gate.run([{ key: "host:a", maxConcurrent: 4, spacingMs: 0 }], async () => void starts.push(Date.now() - t0))));
    expect(Math.min(...starts)).toBeGreaterThanOrEqual(140);
    // another host is not held
    const other = Date.now();
    await gate.run([{ key: "host:b", maxConcurrent: 4, spacingMs: 0 }], async () => {});
    expect(Date.now() - other).toBeLessThan(50);
  });

  it("the crawls waiting for one host take turns: a crawl with few pages does not wait behind a larger one", async () => {
    const gate = new Politeness();
    const order: string[] = [];
    const host = { key: "host:a", maxConcurrent: 2, spacingMs: 0 };
    const fetchOf = (crawl: string) => gate.run([host, { key: `crawl:${crawl}`, maxConcurrent: 100, spacingMs: 0 }], async () => {
      order.push(crawl);
      await tick(5);
    }, { turn: crawl });
    const all = [
      ...Array.from({ length: 40 }, () => fetchOf("big")),
      ...Array.from({ length: 3 }, () => fetchOf("small")),
      ...Array.from({ length: 3 }, () => fetchOf("other")),
    ];
    await Promise.all(all);
    // the first two took the free places; then the turns go big, small, other, big, ...
    const lastSmall = order.lastIndexOf("small");
    const lastOther = order.lastIndexOf("other");
    expect(Math.max(lastSmall, lastOther)).toBeLessThan(12);
    expect(order.filter((c) => c === "big")).toHaveLength(40);
  });

  it("a crawl whose own gate is full lets the next crawl take the host's turn", async () => {
    const gate = new Politeness();
    const host = { key: "host:a", maxConcurrent: 4, spacingMs: 0 };
    let runningA = 0;
    let peakA = 0;
    const started: string[] = [];
    const a = Array.from({ length: 6 }, () => gate.run([host, { key: "crawl:a", maxConcurrent: 1, spacingMs: 0 }], async () => {
      runningA++;
      peakA = Math.max(peakA, runningA);
      started.push("a");
      await tick(30);
      runningA--;
    }, { turn: "a" }));
    const b = Array.from({ length: 3 }, () => gate.run([host, { key: "crawl:b", maxConcurrent: 10, spacingMs: 0 }], async () => {
      started.push("b");
      await tick(30);
    }, { turn: "b" }));
    await Promise.all([...a, ...b]);
    expect(peakA).toBe(1);
    // b's three went with a's first, not after a's six
    expect(started.slice(0, 4).filter((c) => c === "b")).toHaveLength(3);
  });

  it("a host paused by a Retry-After holds only its own fetches; a wait given up rejects and leaves the queue", async () => {
    const gate = new Politeness();
    gate.holdFor("host:slow", 300);
    const slow = gate.run([{ key: "host:slow", maxConcurrent: 4, spacingMs: 0 }], async () => "slow", { turn: "c" });
    const t0 = Date.now();
    await gate.run([{ key: "host:fast", maxConcurrent: 4, spacingMs: 0 }], async () => {}, { turn: "c" });
    expect(Date.now() - t0).toBeLessThan(100);
    const abandoned = gate.run([{ key: "host:slow", maxConcurrent: 4, spacingMs: 0 }], async () => "never", { turn: "d", maxWaitMs: 50 });
    expect(gate.waiting("host:slow")).toBe(2);
    await expect(abandoned).rejects.toMatchObject({ reason: WAITED_TOO_LONG });
    expect(gate.waiting("host:slow")).toBe(1);
    expect(await slow).toBe("slow");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it("giveUpWaiting: every waiting fetch rejects with the reason (a rebalance, a stop); running ones go on", async () => {
    const gate = new Politeness();
    const host = { key: "host:a", maxConcurrent: 1, spacingMs: 0 };
    let release = () => {};
    const running = gate.run([host], () => new Promise<string>((r) => (release = () => r("ran"))), { turn: "x" });
    const waiting = [1, 2, 3].map((i) => gate.run([host, { key: `crawl:${i}`, maxConcurrent: 1, spacingMs: 0 }], async () => "never", { turn: `c${i}`, maxWaitMs: 60_000 }));
    expect(gate.waiting("host:a")).toBe(3);
    gate.giveUpWaiting("rebalance");
    for (const w of waiting) await expect(w).rejects.toBeInstanceOf(GateWaitAborted);
    await expect(waiting[0]).rejects.toMatchObject({ reason: "rebalance" });
    expect(gate.waiting("host:a")).toBe(0);
    release();
    expect(await running).toBe("ran");
    expect(gate.running("host:a")).toBe(0);
  });

  it("spacing (a Crawl-delay): one fetch at a time that far apart, in turns by crawl", async () => {
    const gate = new Politeness();
    const starts: [string, number][] = [];
    const t0 = Date.now();
    const rule = { key: "host:a", maxConcurrent: 1, spacingMs: 40 };
    await Promise.all(["x", "x", "x", "y", "y"].map((c) => gate.run([rule], async () => void starts.push([c, Date.now() - t0]), { turn: c })));
    expect(starts.map(([c]) => c)).toEqual(["x", "x", "y", "x", "y"]);
    for (let i = 1; i < starts.length; i++) expect((starts[i] as [string, number])[1] - (starts[i - 1] as [string, number])[1]).toBeGreaterThanOrEqual(35);
  });
});

describe("robots.txt Crawl-delay", () => {
  it("is read per user agent group, in milliseconds; none is 0", () => {
    const robots = parseRobots("http://a.test/robots.txt", "User-agent: TrawlBot\nCrawl-delay: 1.5\n\nUser-agent: *\nDisallow: /private\n", "text/plain");
    expect(robots.crawlDelayMs("TrawlBot")).toBe(1500);
    expect(robots.crawlDelayMs("OtherBot")).toBe(0);
    expect(parseRobots("http://a.test/robots.txt", "<html>", "text/html").crawlDelayMs("TrawlBot")).toBe(0);
  });
});
