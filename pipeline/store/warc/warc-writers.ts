// The WARC writers of one process, one per crawl (warc-file-writer.ts), and what turns an item to archive into records
// (exchange-records.ts): run on the WARC writer thread (warc-write-worker.ts), or on the calling thread when the
// archive is not threaded. Items come in as data; record building, digests, gzip and the writes happen here.
import { conversionRecords, exchangeRecords, type ExchangeContext } from "./exchange-records.ts";
import type { HttpExchange } from "./http-exchange.ts";
import { WarcFileWriter } from "./warc-file-writer.ts";

/** What is archived: a fetch's exchange (request, response or revisit, metadata), or a rendered DOM (conversion). */
export type WarcItem =
  | { kind: "exchange"; exchange: HttpExchange; context: ExchangeContext }
  | { kind: "rendered"; url: string; html: string; depth: number; at: number };

export interface WarcWritersOptions {
  root: string;
  maxFileBytes: number;
  prefix: string;
  /** host part of file names: the machine and process */
  host: string;
  software: string;
  now: () => number;
}

export class WarcWriters {
  private readonly opts: WarcWritersOptions;
  private readonly writers = new Map<string, WarcFileWriter>();
  private readonly dirOf: (crawlId: string) => string;
  /** writes under way per crawl: a close waits for them (a write still compressing would open a file after the close) */
  private readonly busy = new Map<string, Set<Promise<void>>>();

  constructor(opts: WarcWritersOptions, dirOf: (crawlId: string) => string) {
    this.opts = opts;
    this.dirOf = dirOf;
  }

  private writer(crawlId: string): WarcFileWriter {
    let w = this.writers.get(crawlId);
    if (!w) {
      const { maxFileBytes, prefix, host, software, now } = this.opts;
      w = new WarcFileWriter({ dir: this.dirOf(crawlId), crawlId, maxFileBytes, prefix, host, software, now });
      this.writers.set(crawlId, w);
    }
    return w;
  }

  /** Writes the items' records in order, together, awaiting the bytes on disk. */
  async write(crawlId: string, items: WarcItem[]): Promise<void> {
    if (items.length === 0) return;
    const w = this.writer(crawlId);
    const records = items.flatMap((item) => item.kind === "exchange"
      ? exchangeRecords(item.exchange, item.context, w.earlier)
      : conversionRecords(item.url, item.at, item.html, { crawlId, depth: item.depth, role: "page" }));
    const run = w.append(records);
    const busy = this.busy.get(crawlId) ?? new Set<Promise<void>>();
    this.busy.set(crawlId, busy);
    busy.add(run);
    try {
      await run;
    } finally {
      busy.delete(run);
      if (busy.size === 0 && this.busy.get(crawlId) === busy) this.busy.delete(crawlId);
    }
  }

  /** Closes the crawl's writer (its file complete), when it has one. */
  async closeCrawl(crawlId: string): Promise<void> {
    const w = this.writers.get(crawlId);
    if (!w) return;
    this.writers.delete(crawlId);
    await Promise.allSettled([...(this.busy.get(crawlId) ?? [])]);
    await w.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.writers.keys()].map((id) => this.closeCrawl(id)));
  }
}
