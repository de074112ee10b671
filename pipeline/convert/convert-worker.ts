// Worker thread of the convert pool: converts one fetched page at a time, off the main event loop.
import { setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { convertAny, type ConvertOptions, type FetchedPage, type PageAnalyzer } from "./document.ts";
import { PageError } from "../runtime/errors.ts";
import { BACKGROUND_THREAD_NICE } from "../runtime/thread-priority.ts";

interface Job {
  id: number;
  page: FetchedPage;
  options: ConvertOptions;
}

// Conversion yields to the main thread when the cores are contended: on Linux a nice value is per thread, and
// setPriority(n) (pid 0) sets this worker thread's only. The main thread answers API requests and moves every stage's
// batches. (With two workers converting at full speed on two cores, status p99 under 200 readers rose from ~50 to
// 60-220 ms; this priority's own effect on it was within the benchmark's noise: bench/README.md.)
try {
  setPriority(BACKGROUND_THREAD_NICE);
} catch {
  // not permitted (or not supported): the worker keeps the process's priority
}

// the page analyzer the composition root chose (ConvertPool's `analyzer`), loaded once per worker; the worker's heap
// limit (ConvertPool's `heapMb`), which sizes what a DOCX may inflate to
const { analyzer: analyzerUrl, heapMb } = (workerData as { analyzer?: string; heapMb?: number } | null) ?? {};
const analyze = analyzerUrl ? ((await import(analyzerUrl)) as { analyze: PageAnalyzer }).analyze : undefined;

parentPort?.on("message", (job: Job) => {
  convertAny(job.page, job.options, analyze, heapMb).then(
    (result) => parentPort?.postMessage({ id: job.id, result }),
    (err: unknown) => parentPort?.postMessage({
      id: job.id, error: err instanceof Error ? err.message : String(err), ...(err instanceof PageError ? { code: err.code } : {}),
    }),
  );
});

// the modules are loaded: the pool starts a page's time limit only from here (loading takes seconds on a busy machine)
parentPort?.postMessage({ ready: true });
