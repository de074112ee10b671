// The embedded store's URL rows (what the frontier saw of each URL, its state and reason), one log per crawl:
// store/urls/<crawl id, base64url>.jsonl, each record a batch of rows. A crawl's rows are read only when asked for
// (GET /v2/crawl/:id/urls, a frontier's restart), from its own file: the journal, which a start replays, holds none
// (a journal of an earlier release that does is moved here once, at start).
import { existsSync, mkdirSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { AppendLog, readLines } from "../runtime/append-log.ts";
import type { UrlRow } from "./crawl-store.ts";

export class UrlLogs {
  private readonly dir: string;
  /** the logs of crawls written to since the last `release` */
  private readonly open = new Map<string, AppendLog>();

  constructor(storeDir: string) {
    this.dir = join(storeDir, "urls");
    mkdirSync(this.dir, { recursive: true });
  }

  private pathOf(crawlId: string): string {
    return join(this.dir, `${Buffer.from(crawlId, "utf8").toString("base64url")}.jsonl`);
  }

  private log(crawlId: string): AppendLog {
    let log = this.open.get(crawlId);
    if (!log) {
      log = new AppendLog(this.pathOf(crawlId));
      this.open.set(crawlId, log);
    }
    return log;
  }

  /** Appends rows (of any crawls); resolves once they are written. */
  async append(rows: UrlRow[]): Promise<void> {
    const byCrawl = new Map<string, UrlRow[]>();
    for (const r of rows) {
      const list = byCrawl.get(r.crawlId) ?? [];
      list.push(r);
      byCrawl.set(r.crawlId, list);
    }
    await Promise.all([...byCrawl].map(([id, list]) => this.log(id).append([JSON.stringify(list)]).written));
  }

  /** Every row of a crawl, in the order written, a written batch at a time (a step of an async generator per row cost 4 µs). */
  async *batches(crawlId: string): AsyncGenerator<UrlRow[]> {
    await this.open.get(crawlId)?.flush();
    const path = this.pathOf(crawlId);
    if (!existsSync(path)) return;
    for await (const { line } of readLines(path)) {
      let rows: UrlRow[];
      try {
        rows = JSON.parse(line) as UrlRow[];
      } catch {
        continue; // a record of an earlier format
      }
      yield rows;
    }
  }

  /** The crawl ids with a log. */
  crawlIds(): string[] {
    return readdirSync(this.dir).filter((f) => f.endsWith(".jsonl")).map((f) => Buffer.from(f.slice(0, -".jsonl".length), "base64url").toString("utf8"));
  }

  /** Closes a crawl's log (it is opened again by the next write). */
  async release(crawlId: string): Promise<void> {
    const log = this.open.get(crawlId);
    this.open.delete(crawlId);
    await log?.close();
  }

  /** Bytes of a crawl's log, with what is queued (0: none). */
  sizeOf(crawlId: string): number {
    const log = this.open.get(crawlId);
    if (log) return log.size;
    const path = this.pathOf(crawlId);
    return existsSync(path) ? statSync(path).size : 0;
  }

  /** Deletes a crawl's rows (it expired). */
  async remove(crawlId: string): Promise<void> {
    await this.release(crawlId);
    try {
      unlinkSync(this.pathOf(crawlId));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }

  /** The crawls with an open log. */
  openCrawls(): string[] {
    return [...this.open.keys()];
  }

  async close(): Promise<void> {
    for (const id of [...this.open.keys()]) await this.release(id);
  }
}
