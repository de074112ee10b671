// The arithmetic of bench/replica-churn.ts, apart from its processes: a counter sampled now and then becomes pages per
// second, and a series of times (requests to a partition's hosts) becomes its longest gap in a window.

/** A counter's value at `t` (ms): the last sample taken at or before it (0 before the first). */
export function valueAt(samples: { at: number; value: number }[], t: number): number {
  let v = 0;
  for (const s of samples) {
    if (s.at > t) break;
    v = s.value;
  }
  return v;
}

/** Per second from `from` (ms) for `seconds` seconds: how much the counter rose in that second. */
export function perSecond(samples: { at: number; value: number }[], from: number, seconds: number): number[] {
  return Array.from({ length: seconds }, (_, s) => valueAt(samples, from + (s + 1) * 1000) - valueAt(samples, from + s * 1000));
}

export function median(xs: number[]): number {
  if (!xs.length) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** The longest run of consecutive entries of `rates` (seconds) below `threshold`. */
export function longestRunBelow(rates: number[], threshold: number): number {
  let longest = 0;
  let run = 0;
  for (const r of rates) {
    run = r < threshold ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}

/** The longest time (ms) inside [from, to) with no entry of `times` (sorted), the window's ends counted as edges. */
export function longestGap(times: number[], from: number, to: number): number {
  let last = from;
  let longest = 0;
  for (const t of times) {
    if (t < from) continue;
    if (t >= to) break;
    longest = Math.max(longest, t - last);
    last = t;
  }
  return Math.max(longest, to - last);
}
