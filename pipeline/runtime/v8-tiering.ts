// How V8 picks what to compile with TurboFan. A first crawl after start is V8's warm-up: by default it TurboFan-
// compiles every function that runs hot for a moment, including each convert worker's parser and renderer (called once
// per page, hot through their loops, deoptimized and compiled again as new pages bring new shapes). On two cores those
// compiles took ~0.5 ms of CPU per page from the crawl (V8's helper threads, first crawl of the PostgreSQL manual) for
// code that ran little faster than Maglev's. V8's efficiency mode leaves a function on Maglev until it has been called
// 15,000 times (`--efficiency-mode-delay-turbofan`); its other effect, garbage collection without helper threads, is
// turned off again (the cluster's main thread took that work, bench/README.md). Code that loops over batches is called
// far fewer times than that and would stay on Maglev for good (a 100,000-page crawl of small pages ran ~20 % slower), so
// the mode ends once the process has spent its warm-up CPU: V8 reads the flag at each tiering decision.
import { setFlagsFromString } from "node:v8";
import type { Logger } from "./logger.ts";

/** The V8 flags of V8_EFFICIENCY_MODE=true. */
export const EFFICIENCY_FLAGS = ["--efficiency-mode", "--no-single-threaded-gc-in-background"] as const;

/** Process CPU (all threads, since start) in seconds. */
const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * Efficiency mode's tiering on (GC on helper threads kept) for every isolate of the process, until the process has
 * used `cpuS` seconds of CPU (0: for good), checked every `checkMs`; then V8's own tiering. Off: V8's own tiering.
 */
export function setV8EfficiencyMode(on: boolean, opts: { cpuS: number; checkMs?: number; log?: Logger }): { stop(): void } {
  if (!on) return { stop: () => undefined };
  for (const flag of EFFICIENCY_FLAGS) setFlagsFromString(flag);
  if (opts.cpuS <= 0) return { stop: () => undefined };
  const timer = setInterval(() => {
    if (cpuSeconds() < opts.cpuS) return;
    clearInterval(timer);
    setFlagsFromString("--no-efficiency-mode");
    opts.log?.info({ cpuS: opts.cpuS }, "warm-up CPU spent: V8's own tiering from now on (V8_EFFICIENCY_CPU_S)");
  }, opts.checkMs ?? 1000).unref();
  return { stop: () => clearInterval(timer) };
}
