import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// A child process keeps ~64 MB alive and passes ~0.5 GB through a window that holds each object long enough to be
// promoted to the old space (as a crawl's messages are), so the old space fills with garbage between full GCs; the
// peak heap tells how far V8 let it grow past the live data. setFlagsFromString ignores a flag it does not know: this
// fails if V8 drops --heap-growing-percent.
const script = (percent: number) => `
  const { setHeapGrowth } = await import(${JSON.stringify(join(import.meta.dirname, "heap-growth.ts"))});
  setHeapGrowth(${percent});
  const live = [];
  for (let i = 0; i < 8; i++) live.push(new Array(1e6).fill(i));
  const windowed = [];
  let peak = 0;
  for (let i = 0; i < 2500; i++) {
    windowed.push(Array.from({ length: 2000 }, (_, j) => ({ i, j, s: "y".repeat(j % 64) + i })));
    if (windowed.length > 40) windowed.shift();
    if (i % 10 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
  }
  console.log(JSON.stringify({ peakMB: Math.round(peak / 1e6), live: live.length, windowed: windowed.length }));
`;

const peakMB = (percent: number) => {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", script(percent)], { encoding: "utf8" });
  return (JSON.parse(out) as { peakMB: number }).peakMB;
};

describe("setHeapGrowth", () => {
  it("keeps the heap near its live data where V8's own policy lets it grow far past", () => {
    const own = peakMB(0);
    const tight = peakMB(20);
    expect(tight).toBeLessThan(own * 0.8);
    expect(tight).toBeGreaterThan(60); // the live data
  });
});

describe("collectGarbage", () => {
  it("collects what nothing references any more, and leaves the process's global without a gc", () => {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", `
      const { collectGarbage } = await import(${JSON.stringify(join(import.meta.dirname, "heap-growth.ts"))});
      let junk = Array.from({ length: 300000 }, (_, i) => ({ i, s: "x".repeat(i % 50) + i }));
      const kept = junk.length;
      junk = null;
      const before = process.memoryUsage().heapUsed;
      const ms = collectGarbage();
      const after = process.memoryUsage().heapUsed;
      console.log(JSON.stringify({ freedMB: (before - after) / 1e6, ms, kept, globalGc: typeof globalThis.gc }));
    `], { encoding: "utf8" });
    const r = JSON.parse(out) as { freedMB: number; ms: number; globalGc: string };
    expect(r.freedMB).toBeGreaterThan(10);
    expect(r.ms).toBeGreaterThan(0);
    expect(r.globalGc).toBe("undefined");
  });
});
