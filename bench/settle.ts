// Before each benchmark of bench/run.ts: the machine quiet, so the one before does not count in the next.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** Busy share of all cores over `ms`, from /proc/stat. */
function busyShare(ms: number): number {
  const read = () => (readFileSync("/proc/stat", "utf8").split("\n")[0] as string).trim().split(/\s+/).slice(1).map(Number);
  const a = read();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const d = read().map((x, i) => x - (a[i] ?? 0));
  const total = d.reduce((n, x) => n + x, 0);
  const idle = (d[3] ?? 0) + (d[4] ?? 0);
  return total > 0 ? 1 - idle / total : 0;
}

/** Before each benchmark: dirty pages written out and the machine quiet (under 15 % busy for two seconds in a row,
 * at most 60 s): the one before (its servers' shutdown, deleted files, writeback) is not counted in the next. */
export function settle(): { waitedS: number; busy: number } {
  execFileSync("sync");
  const t0 = performance.now();
  let quiet = 0;
  let busy = 1;
  while (quiet < 2 && performance.now() - t0 < 60_000) {
    busy = busyShare(1000);
    quiet = busy < 0.15 ? quiet + 1 : 0;
  }
  return { waitedS: +((performance.now() - t0) / 1000).toFixed(1), busy: +busy.toFixed(2) };
}
