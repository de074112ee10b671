// V8 grows the old space after each full GC by a factor it picks from its GC and allocation speeds (up to 4x the data
// that survived). A crawl allocates fast and keeps little, so the heap of a long crawl grew to ~3x its live data and
// RSS doubled from 10 % to 100 % of a 100,000-page crawl (bench/README.md, third session). HEAP_GROWTH_PERCENT sets
// V8's --heap-growing-percent at start (V8 reads it at every full GC, so setting it at run time takes effect).
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

/** Sets the heap's growth past its live data at each full GC (percent; 0 leaves V8's own policy). */
export function setHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * One full collection now, and how long it took (ms). Start-up leaves garbage behind (module compilation, schema
 * compilers, parsed lists) that V8 otherwise collects in the first major GC of the first crawl: a 25-50 ms pause of
 * everything the process does, status reads included (bench/README.md, eighth session). V8's gc is exposed to a
 * context of its own, so the process's global object stays as it was.
 */
export function collectGarbage(): number {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const t0 = performance.now();
  gc();
  return performance.now() - t0;
}
