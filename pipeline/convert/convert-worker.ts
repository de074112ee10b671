// Worker thread of the convert pool: converts one fetched page at a time, off the main event loop.
import { parentPort, workerData } from "node:worker_threads";
import { convertAny, type ConvertOptions, type FetchedPage, type PageAnalyzer } from "./document.ts";
import { PageError } from "../runtime/errors.ts";

interface Job {
  id: number;
  page: FetchedPage;
  options: ConvertOptions;
}

// the page analyzer the composition root chose (ConvertPool's `analyzer`), loaded once per worker
const analyzerUrl = (workerData as { analyzer?: string } | null)?.analyzer;
const analyze = analyzerUrl ? ((await import(analyzerUrl)) as { analyze: PageAnalyzer }).analyze : undefined;

parentPort?.on("message", (job: Job) => {
  convertAny(job.page, job.options, analyze).then(
    (result) => parentPort?.postMessage({ id: job.id, result }),
    (err: unknown) => parentPort?.postMessage({
      id: job.id, error: err instanceof Error ? err.message : String(err), ...(err instanceof PageError ? { code: err.code } : {}),
    }),
  );
});

// the modules are loaded: the pool starts a page's time limit only from here (loading takes seconds on a busy machine)
parentPort?.postMessage({ ready: true });
