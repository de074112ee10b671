// V8's platform threads (named V8Worker: concurrent JIT compilation and concurrent GC marking, shared by every isolate
// of the process) run at a lower priority than the main thread, as the convert workers do (convert-worker.ts). On two
// cores the main thread answers API requests and moves every stage's batches; in the first crawl after start these
// threads compile the hot code (0.8 ms of CPU per page, against 0.25 in later crawls) and took the core from status
// reads. Paired A/B, embedded, 3 crawls x 200 readers: pooled p99 lower with the priority in 8 pairs of 9
// (bench/README.md, "Third session"). On Linux a nice value is per thread and a process may lower its own threads'.
import { readdirSync, readFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";

export const BACKGROUND_THREAD_NICE = 10;

/** Lowers the priority of the process's threads named `name` to at most `nice` (Linux; elsewhere nothing); how many. */
export function lowerThreads(name = "V8Worker", nice = BACKGROUND_THREAD_NICE): number {
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return 0; // no /proc: not Linux
  }
  let lowered = 0;
  for (const tid of tids) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() !== name) continue;
      if (getPriority(Number(tid)) < nice) setPriority(Number(tid), nice); // never raises one already lower
      lowered++;
    } catch {
      continue; // the thread ended, or lowering is not permitted: it keeps the process's priority
    }
  }
  return lowered;
}
