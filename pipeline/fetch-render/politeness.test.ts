import { describe, expect, it } from "vitest";
import { Politeness } from "./politeness.ts";
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
});

describe("robots.txt Crawl-delay", () => {
  it("is read per user agent group, in milliseconds; none is 0", () => {
    const robots = parseRobots("http://a.test/robots.txt", "User-agent: TrawlBot\nCrawl-delay: 1.5\n\nUser-agent: *\nDisallow: /private\n", "text/plain");
    expect(robots.crawlDelayMs("TrawlBot")).toBe(1500);
    expect(robots.crawlDelayMs("OtherBot")).toBe(0);
    expect(parseRobots("http://a.test/robots.txt", "<html>", "text/html").crawlDelayMs("TrawlBot")).toBe(0);
  });
});
