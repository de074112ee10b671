// The calling side of the WARC writer thread (warc-write-worker.ts). The main event loop only hands items over: the
// writes asked for in one turn of the loop go in one message, their payloads copied into one buffer that is
// transferred, not cloned; record building, digests, gzip and the writes cost the worker's CPU, not the loop's.
// Each write resolves once its records are on disk, as on the calling thread, so a fetch task's offset is still
// committed only after its records were written. A worker that dies fails the writes under way (the tasks are retried)
// and is started again at the next write.
import { Worker } from "node:worker_threads";
import type { ExchangeContext } from "./exchange-records.ts";
import type { HttpExchange } from "./http-exchange.ts";
import type { WarcItem, WarcWritersOptions } from "./warc-writers.ts";

type WireExchange = Omit<HttpExchange, "payload"> & { payloadAt: number; payloadLength: number };
type WireItem = { kind: "exchange"; exchange: WireExchange; context: ExchangeContext } | Extract<WarcItem, { kind: "rendered" }>;

/** A batch of writes (`jobs`, payloads in `buffer`), or a close of one crawl's writer ("*": every writer). */
export interface WireMessage {
  id: number;
  jobs: { crawlId: string; items: WireItem[] }[];
  buffer: ArrayBuffer;
  close?: string;
}

/** Per job of the message, null or the error's message. */
export interface WireReply {
  id: number;
  errors: (string | null)[];
}

interface Job {
  crawlId: string;
  items: WarcItem[];
  resolve: () => void;
  reject: (err: Error) => void;
}

export class WarcWriteThread {
  private readonly opts: Omit<WarcWritersOptions, "now">;
  private worker: Worker | null = null;
  private queue: Job[] = [];
  private scheduled = false;
  private readonly sent = new Map<number, Job[]>();
  private nextId = 1;

  constructor(opts: Omit<WarcWritersOptions, "now">) {
    this.opts = opts;
  }

  /** Writes the items' records in order, together; resolves once they are on disk. */
  write(crawlId: string, items: WarcItem[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.queue.push({ crawlId, items, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Closes the crawl's writer after the writes asked for before. */
  closeCrawl(crawlId: string): Promise<void> {
    return this.control(crawlId);
  }

  /** Closes every writer, then stops the thread. */
  async close(): Promise<void> {
    if (!this.worker && this.queue.length === 0) return;
    try {
      await this.control("*");
    } finally {
      const worker = this.worker;
      this.worker = null;
      await worker?.terminate();
    }
  }

  private control(close: string): Promise<void> {
    this.flush();
    if (!this.worker && close === "*") return Promise.resolve();
    return new Promise((resolve, reject) => this.post({ id: this.nextId++, jobs: [], buffer: new ArrayBuffer(0), close }, [{ crawlId: close, items: [], resolve, reject }]));
  }

  private flush(): void {
    this.scheduled = false;
    const jobs = this.queue;
    if (jobs.length === 0) return;
    this.queue = [];
    let size = 0;
    for (const job of jobs) for (const item of job.items) if (item.kind === "exchange") size += item.exchange.payload.length;
    // every payload of the batch in one buffer, transferred: no clone of each Buffer's whole backing store
    const buffer = new ArrayBuffer(size);
    const bytes = new Uint8Array(buffer);
    let at = 0;
    const wire = jobs.map((job) => ({
      crawlId: job.crawlId,
      items: job.items.map((item): WireItem => {
        if (item.kind !== "exchange") return item;
        const { payload, ...rest } = item.exchange;
        bytes.set(payload, at);
        const exchange: WireExchange = { ...rest, payloadAt: at, payloadLength: payload.length };
        at += payload.length;
        return { kind: "exchange", exchange, context: item.context };
      }),
    }));
    this.post({ id: this.nextId++, jobs: wire, buffer }, jobs, [buffer]);
  }

  private post(msg: WireMessage, jobs: Job[], transfer: ArrayBuffer[] = []): void {
    try {
      const worker = this.worker ?? this.spawn();
      this.sent.set(msg.id, jobs);
      worker.ref();
      worker.postMessage(msg, transfer);
    } catch (err) {
      // not started, or a value that cannot be cloned: these writes fail (their tasks are retried), nothing else
      this.sent.delete(msg.id);
      for (const job of jobs) job.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private spawn(): Worker {
    const worker = new Worker(new URL("./warc-write-worker.ts", import.meta.url), { workerData: this.opts });
    worker.on("message", (reply: WireReply) => {
      const jobs = this.sent.get(reply.id);
      if (!jobs) return;
      this.sent.delete(reply.id);
      jobs.forEach((job, i) => {
        const error = reply.errors[i] ?? null;
        if (error === null) job.resolve();
        else job.reject(new Error(error));
      });
      if (this.sent.size === 0) worker.unref();
    });
    const gone = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      const lost = [...this.sent.values()].flat();
      this.sent.clear();
      for (const job of lost) job.reject(err);
    };
    worker.on("error", (err) => gone(new Error(`the WARC writer thread failed: ${err.message}`)));
    worker.on("exit", (code) => gone(new Error(`the WARC writer thread exited (code ${code})`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }
}
