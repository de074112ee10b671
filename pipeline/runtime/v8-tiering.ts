// How V8 picks what to compile with TurboFan. A first crawl after start is V8's warm-up: by default it TurboFan-
// compiles every function that runs hot for a moment, including each convert worker's parser and renderer (called once
// per page, hot through their loops, deoptimized and compiled again as new pages bring new shapes). On two cores those
// compiles took ~0.5 ms of CPU per page from the crawl (V8's helper threads, first crawl of the PostgreSQL manual) for
// code that ran little faster than Maglev's. V8's efficiency mode leaves a function on Maglev until it has been called
// 15,000 times (`--efficiency-mode-delay-turbofan`); its other effect, garbage collection without helper threads, is
// turned off again (the cluster's main thread took that work, bench/README.md).
import { setFlagsFromString } from "node:v8";

/** The V8 flags of V8_EFFICIENCY_MODE=true. */
export const EFFICIENCY_FLAGS = ["--efficiency-mode", "--no-single-threaded-gc-in-background"] as const;

/** Efficiency mode's tiering on (and GC on helper threads kept) or V8's default tiering; for every isolate started after. */
export function setV8EfficiencyMode(on: boolean): void {
  if (on) for (const flag of EFFICIENCY_FLAGS) setFlagsFromString(flag);
}
