// sortChunked sorts as Array.prototype.sort does (stable) and lets timers run while it sorts a large array: the native
// sort of the same array is one task during which no timer runs.
import { describe, expect, it } from "vitest";
import { sortChunked } from "./chunked-sort.ts";

/** Timer callbacks (a timer re-armed every millisecond) that ran while `work` did. */
async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  let running = true;
  const tick = () => {
    ticks++;
    if (running) setTimeout(tick, 1);
  };
  setTimeout(tick, 1);
  await work();
  running = false;
  return ticks;
}

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ depth: (i * 7919) % 5, url: `https://h${(i * 104729) % 997}.test/p/${(i * 31) % 100_003}`, i }));
const byDepthThenUrl = (a: { depth: number; url: string }, b: { depth: number; url: string }) => a.depth - b.depth || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);

describe("sortChunked", () => {
  it("sorts like Array.prototype.sort, stable, for sizes around its run length", async () => {
    for (const n of [0, 1, 5, 2047, 2048, 2049, 4096, 10_000, 33_333]) {
      const input = rows(n);
      const want = [...input].sort(byDepthThenUrl);
      const got = await sortChunked([...input], byDepthThenUrl);
      expect(got.map((r) => r.i), `n=${n}`).toEqual(want.map((r) => r.i));
    }
  });

  it("lets timers run while it sorts 200,000 rows (the native sort is one task: no timer runs during it)", async () => {
    const input = rows(200_000);
    expect(await ticksDuring(async () => [...input].sort(byDepthThenUrl))).toBe(0);
    expect(await ticksDuring(() => sortChunked([...input], byDepthThenUrl))).toBeGreaterThan(10);
  });
});
