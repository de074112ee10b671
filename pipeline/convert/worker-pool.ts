// A pool of worker threads for conversion: parsing and rendering run off the event loop (the API and the other
// stages of an embedded process stay responsive), and a page that takes longer than the time limit is abandoned
// (its worker is terminated and replaced) instead of stalling the stage. Each worker has a heap limit: a page whose
// conversion needs more (a DOCX of millions of tiny elements) ends its worker, fails with SCRAPE_CONVERT_OUT_OF_MEMORY,
// and the worker is replaced; the process and the other pages never feel it.
import { Worker } from "node:worker_threads";
import { isAsyncPage, isDocxPage, type ConvertOptions, type Converted, type FetchedPage } from "./document.ts";

interface Pending {
  id: number;
  page: FetchedPage;
  options: ConvertOptions;
  resolve: (c: Converted) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  /** The worker has loaded its modules: the time limit of a page counts conversion only, not start-up. */
  ready: boolean;
  /** Pages posted to the worker, in the order it converts them: the first is the one it is converting. */
  jobs: Pending[];
  /** The time limit of the first job, counted from when the worker started it (as far as this thread knows). */
  timer: NodeJS.Timeout | null;
  /** Terminated on purpose or already handled as dead: its later 'error' or 'exit' concerns nobody. */
  gone: boolean;
  /** It converted a big input (isBig): no new page; replaced once it has none. */
  retiring: boolean;
}

/**
 * A worker that converted a big input (a DOCX, or a page or file over this size) is replaced once it has no page left:
 * V8 keeps the memory such a conversion took for as long as the worker lives (an 8 MiB DOCX left ~800 MB in RSS), and
 * gives it back once the worker is gone. Crawled pages are far smaller; a new worker costs a module load in its thread.
 */
const RECYCLE_INPUT_BYTES = 4 * 1024 * 1024;

const isBig = (page: FetchedPage): boolean => isDocxPage(page) || (page.bytes?.byteLength ?? 0) > RECYCLE_INPUT_BYTES || page.body.length > RECYCLE_INPUT_BYTES;

/**
 * Pages posted to a worker ahead of the one it converts. With one at a time a worker sat idle between pages until this
 * (busy) thread handled its result and posted the next: in an embedded crawl the two workers used ~1.45 of the two
 * cores while pages waited. A page queued behind a slow one waits for it; the pump posts to the least-loaded worker.
 */
const PAGES_AHEAD = 2;

/**
 * A PDF or a DOCX converts asynchronously (pdfjs and mammoth await): a page posted behind it would run while it waits,
 * inside its time limit, and a time-out or crash would be charged to the wrong page. Nothing is posted behind one;
 * other pages convert synchronously, so the worker's first page is always the one it is converting.
 */
const isAsync = (job: Pending): boolean => isAsyncPage(job.page);

export class ConvertTimeoutError extends Error {}
export class ConvertFailedError extends Error {
  /** The page error's code when the worker failed the page on purpose (e.g. SCRAPE_TOO_LARGE) */
  readonly code: string | undefined;
  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** The code of a page whose worker ran out of heap (its conversion needed more than heapMb). */
export const OUT_OF_MEMORY = "SCRAPE_CONVERT_OUT_OF_MEMORY";

export class ConvertPool {
  private readonly size: number;
  private readonly timeoutMs: number;
  private readonly heapMb: number | undefined;
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private replacedCount = 0;

  private readonly analyzer: string | undefined;

  /**
   * analyzer: URL of a module whose `analyze` export is a PageAnalyzer (document.ts); each worker loads it and runs it
   * on every HTML page it parses, under the same time limit. A module, not a function: functions do not cross threads.
   */
  /**
   * lazy: the workers start with the first page instead of at once (the API process converts only for /v2/scrape,
   * /v2/parse and extract jobs: two idle workers cost it ~60 MB of RSS).
   * heapMb: each worker's V8 heap limit (old and young generations together; undefined: V8's default, the process's).
   */
  constructor(opts: { size: number; timeoutMs: number; heapMb?: number; analyzer?: string; lazy?: boolean }) {
    this.size = Math.max(1, opts.size);
    this.timeoutMs = opts.timeoutMs;
    this.heapMb = opts.heapMb;
    this.analyzer = opts.analyzer;
    if (!opts.lazy) this.start();
  }

  private start(): void {
    while (this.slots.length < this.size) this.slots.push(this.spawn());
  }

  /** Workers replaced so far: timed out, crashed, out of heap, or recycled after a big page. */
  get replaced(): number {
    return this.replacedCount;
  }

  /** Worker threads running (0 for a lazy pool that has converted nothing yet). */
  get workers(): number {
    return this.slots.length;
  }

  /** V8's young generation is a small, fixed share of the limit; the old generation gets the rest. */
  private resourceLimits(): { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number } | undefined {
    if (this.heapMb === undefined) return undefined;
    const young = Math.max(4, Math.min(64, Math.floor(this.heapMb / 16)));
    return { maxOldGenerationSizeMb: Math.max(16, this.heapMb - young), maxYoungGenerationSizeMb: young };
  }

  private spawn(): Slot {
    const limits = this.resourceLimits();
    const worker = new Worker(new URL("./convert-worker.ts", import.meta.url), { workerData: { analyzer: this.analyzer, heapMb: this.heapMb }, ...(limits ? { resourceLimits: limits } : {}) });
    const slot: Slot = { worker, ready: false, jobs: [], timer: null, gone: false, retiring: false };
    worker.on("message", (msg: { id: number; result?: Converted; error?: string; code?: string; ready?: true }) => {
      if (msg.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      // results come in order (nothing is posted behind a PDF or a DOCX, the pages converted asynchronously); matched
      // by id all the same
      const at = slot.jobs.findIndex((j) => j.id === msg.id);
      if (at < 0) return;
      const job = slot.jobs.splice(at, 1)[0] as Pending;
      if (at === 0) this.startTimer(slot);
      if (msg.error !== undefined) job.reject(new ConvertFailedError(msg.error, msg.code));
      else job.resolve(msg.result as Converted);
      if (isBig(job.page)) slot.retiring = true;
      if (slot.retiring && slot.jobs.length === 0) this.replace(slot); // replace() pumps
      else this.pump();
    });
    // the worker converts its pages in order: the one it died on is the first; the others go back to the queue
    worker.on("error", (err: Error & { code?: string }) => {
      if (err.code === "ERR_WORKER_OUT_OF_MEMORY") this.died(slot, new ConvertFailedError(`the conversion needed more memory than a convert worker has (${this.heapMb ?? "V8's default"} MB heap): ${err.message}`, OUT_OF_MEMORY));
      else this.died(slot, new ConvertFailedError(`conversion worker crashed: ${err.message}`));
    });
    // an exit nobody asked for (process.exit in a module, a native abort of the thread) without an 'error' first
    worker.on("exit", (exitCode) => this.died(slot, new ConvertFailedError(`conversion worker exited (code ${exitCode})`)));
    worker.unref();
    return slot;
  }

  /** The slot's worker is gone: its current page fails with `err`, the worker is replaced. Once per worker. */
  private died(slot: Slot, err: ConvertFailedError): void {
    if (slot.gone) return;
    const job = slot.jobs.shift();
    this.replace(slot);
    job?.reject(err);
  }

  private stopTimer(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
  }

  /** Starts the time limit of the slot's first job (the one its worker converts now), if any. */
  private startTimer(slot: Slot): void {
    this.stopTimer(slot);
    const job = slot.jobs[0];
    if (!job) return;
    slot.timer = setTimeout(() => {
      slot.jobs.shift();
      this.replace(slot);
      job.reject(new ConvertTimeoutError(`conversion took longer than ${this.timeoutMs} ms`));
    }, this.timeoutMs);
  }

  /** Terminates the slot's worker and starts another; the pages it had not started go back to the front of the queue. */
  private replace(slot: Slot): void {
    this.stopTimer(slot);
    slot.gone = true;
    const unstarted = slot.jobs.splice(0);
    void slot.worker.terminate();
    if (this.closed) {
      for (const job of unstarted) job.reject(new Error("convert pool closed"));
      return;
    }
    this.queue.unshift(...unstarted);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots[i] = this.spawn();
    this.replacedCount++;
    this.pump();
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot: Slot | null = null;
      for (const s of this.slots) if (s.ready && !s.retiring && s.jobs.length < PAGES_AHEAD && !s.jobs.some(isAsync) && (!slot || s.jobs.length < slot.jobs.length)) slot = s;
      if (!slot) return;
      const job = this.queue.shift() as Pending;
      slot.jobs.push(job);
      if (slot.jobs.length === 1) this.startTimer(slot);
      slot.worker.postMessage({ id: job.id, page: job.page, options: job.options });
    }
  }

  convert(page: FetchedPage, options: ConvertOptions): Promise<Converted> {
    if (this.closed) return Promise.reject(new Error("convert pool closed"));
    this.start();
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, page, options, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = [...this.queue.splice(0), ...this.slots.flatMap((slot) => {
      this.stopTimer(slot);
      slot.gone = true;
      return slot.jobs.splice(0);
    })];
    for (const job of pending) job.reject(new Error("convert pool closed"));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
