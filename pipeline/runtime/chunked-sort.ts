// Sorting a large array without holding the event loop: Array.prototype.sort of a million URL rows is one task of
// a second or more, and every socket (status reads, the crawl's own I/O) waits for it. This sorts runs of RUN items
// natively, then merges them pairwise, and lets I/O in (`turn()`, yield-turn.ts) between runs and every STEP items of
// a merge. Stable, like Array.prototype.sort.
import { turn } from "./yield-turn.ts";

const RUN = 2048;
const STEP = 4096;

/** Sorts `items` in place by `cmp` (stable) and returns it; the work is cut into slices of the event loop. */
export async function sortChunked<T>(items: T[], cmp: (a: T, b: T) => number): Promise<T[]> {
  const n = items.length;
  if (n <= RUN) return items.sort(cmp);
  for (let from = 0; from < n; from += RUN) {
    const run = items.slice(from, from + RUN).sort(cmp);
    for (let i = 0; i < run.length; i++) items[from + i] = run[i] as T;
    await turn();
  }
  let src = items;
  let dst = new Array<T>(n);
  let steps = 0;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        // the left run first on ties: stable
        if (i < mid && (j >= hi || cmp(src[i] as T, src[j] as T) <= 0)) dst[k] = src[i++] as T;
        else dst[k] = src[j++] as T;
        if (++steps % STEP === 0) await turn();
      }
    }
    [src, dst] = [dst, src];
  }
  if (src !== items) for (let i = 0; i < n; i++) items[i] = src[i] as T;
  return items;
}
