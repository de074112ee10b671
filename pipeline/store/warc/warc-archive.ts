// The web archives of every crawl, in one directory (DATA_DIR/warc in embedded mode, WARC_DIR in cluster mode, a
// shared volume): <root>/<crawlId>/*.warc.gz and their CDXJ sidecars. The writing side keeps one writer per crawl
// in this process (closed after WARC_IDLE_CLOSE_MS without a record, and at stop); the reading side lists files,
// hashes them, merges the index, and deletes a crawl's archives with its results.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, readFile, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { mergeCdxj } from "./cdxj-index.ts";
import { exchangeRecords, type ExchangeContext } from "./exchange-records.ts";
import type { HttpExchange } from "./http-exchange.ts";
import { WarcFileWriter } from "./warc-file-writer.ts";

export interface WarcFileInfo {
  name: string;
  bytes: number;
  sha256: string;
}

export interface WarcArchiveOptions {
  root: string;
  maxFileBytes: number;
  now?: () => number;
  prefix?: string;
  software?: string;
  /** a writer with no record for this long is closed (its file complete) */
  idleCloseMs?: number;
}

/** Crawl ids are UUIDs; anything else could walk out of the root. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const SAFE_NAME = /^[A-Za-z0-9._-]{1,255}\.warc\.gz$/;

export class WarcArchive {
  private readonly opts: Required<WarcArchiveOptions>;
  private readonly writers = new Map<string, WarcFileWriter>();
  private readonly host: string;
  private readonly sums = new Map<string, { key: string; sha256: string }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(opts: WarcArchiveOptions) {
    this.opts = { now: Date.now, prefix: "TRAWL", software: "Trawl", idleCloseMs: 30_000, ...opts };
    this.host = `${hostname().replace(/[^A-Za-z0-9-]/g, "-").slice(0, 60)}-${process.pid}`;
  }

  crawlDir(crawlId: string): string {
    if (!SAFE_ID.test(crawlId)) throw new Error(`not a crawl id: ${crawlId}`);
    return join(this.opts.root, crawlId);
  }

  private writer(crawlId: string): WarcFileWriter {
    let w = this.writers.get(crawlId);
    if (!w) {
      w = new WarcFileWriter({ dir: this.crawlDir(crawlId), crawlId, maxFileBytes: this.opts.maxFileBytes, prefix: this.opts.prefix, host: this.host, software: this.opts.software, now: this.opts.now });
      this.writers.set(crawlId, w);
      this.timer ??= setInterval(() => void this.closeIdle(), Math.max(1000, this.opts.idleCloseMs / 2)).unref();
    }
    return w;
  }

  /** Archives the exchanges of one fetched URL (redirect hops first), awaiting the bytes on disk. */
  async archive(exchanges: { exchange: HttpExchange; context: ExchangeContext }[], crawlId: string): Promise<void> {
    if (exchanges.length === 0) return;
    const w = this.writer(crawlId);
    const records = exchanges.flatMap(({ exchange, context }) => exchangeRecords(exchange, context, w.earlier));
    await w.append(records);
  }

  /** Archives a robots.txt exchange once per crawl and origin (per process). */
  async archiveRobots(crawlId: string, origin: string, exchanges: HttpExchange[]): Promise<void> {
    const w = this.writer(crawlId);
    if (w.robotsWritten.has(origin)) return;
    w.robotsWritten.add(origin);
    await this.archive(exchanges.map((exchange) => ({ exchange, context: { crawlId, role: "robots" as const } })), crawlId);
  }

  async closeIdle(): Promise<void> {
    const cutoff = this.opts.now() - this.opts.idleCloseMs;
    for (const [id, w] of this.writers) {
      if (w.lastUsed < cutoff) {
        this.writers.delete(id);
        await w.close();
      }
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const all = [...this.writers.values()];
    this.writers.clear();
    await Promise.all(all.map((w) => w.close()));
  }

  /** The crawl's WARC files, by name, with their size and SHA-256 (cached while size and mtime stay the same). */
  async files(crawlId: string): Promise<WarcFileInfo[]> {
    const dir = this.crawlDir(crawlId);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => SAFE_NAME.test(n)).sort();
    const out: WarcFileInfo[] = [];
    for (const name of names) {
      const path = join(dir, name);
      const st = await stat(path);
      const key = `${st.size}:${st.mtimeMs}`;
      let sum = this.sums.get(path);
      if (sum?.key !== key) {
        sum = { key, sha256: await sha256File(path) };
        this.sums.set(path, sum);
      }
      out.push({ name, bytes: st.size, sha256: sum.sha256 });
    }
    return out;
  }

  /** The path of one of the crawl's files, or null when the name is not one. */
  async filePath(crawlId: string, name: string): Promise<{ path: string; bytes: number } | null> {
    if (!SAFE_NAME.test(name)) return null;
    const path = join(this.crawlDir(crawlId), name);
    const st = await stat(path).catch(() => null);
    return st?.isFile() ? { path, bytes: st.size } : null;
  }

  /** The crawl's CDXJ index: merged, each URL once, sorted. */
  async cdxj(crawlId: string): Promise<string[]> {
    const dir = this.crawlDir(crawlId);
    const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(".warc.gz.cdxj"));
    return mergeCdxj(await Promise.all(names.map((n) => readFile(join(dir, n), "utf8"))));
  }

  /** Removes the crawl's archives (retention). */
  async remove(crawlId: string): Promise<void> {
    const w = this.writers.get(crawlId);
    if (w) {
      this.writers.delete(crawlId);
      await w.close();
    }
    await rm(this.crawlDir(crawlId), { recursive: true, force: true });
  }

  /** Crawl ids that have archives (for the retention sweep). */
  async crawlIds(): Promise<string[]> {
    return (await readdir(this.opts.root).catch(() => [] as string[])).filter((n) => SAFE_ID.test(n));
  }
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path).on("data", (c) => hash.update(c)).on("error", reject).on("end", () => resolve(hash.digest("hex")));
  });
}
