// The web archives of every crawl, in one directory (DATA_DIR/warc in embedded mode, WARC_DIR in cluster mode, a
// shared volume): <root>/<crawlId>/*.warc.gz and their CDXJ sidecars. The writing side keeps one writer per crawl
// in this process (closed after WARC_IDLE_CLOSE_MS without a record, and at stop), on the WARC writer thread
// (warc-write-thread.ts: records, digests, gzip and writes off the event loop) unless `thread: false`; the reading
// side lists files, hashes them, merges the index, and deletes a crawl's archives with its results.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { mergeCdxj } from "./cdxj-index.ts";
import type { ExchangeContext } from "./exchange-records.ts";
import type { HttpExchange } from "./http-exchange.ts";
import { WarcWriteThread } from "./warc-write-thread.ts";
import { WarcWriters, type WarcItem } from "./warc-writers.ts";
import { alive, uploaded } from "./warc-markers.ts";
import { cutTornTails, type CutTail } from "./warc-repair.ts";

export interface WarcFileInfo {
  name: string;
  bytes: number;
  sha256: string;
  /** where the file was copied (WARC_S3_URL), once it is */
  s3?: string;
}

export interface WarcOwner {
  teamId: string;
  kind: "crawl" | "batch";
}

export interface WarcArchiveOptions {
  root: string;
  maxFileBytes: number;
  now?: () => number;
  prefix?: string;
  software?: string;
  /** a writer with no record for this long is closed (its file complete) */
  idleCloseMs?: number;
  /** write on the WARC writer thread (default: yes, unless `now` is given: the thread reads the system's clock) */
  thread?: boolean;
}

/** Crawl ids are UUIDs; anything else could walk out of the root. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const SAFE_NAME = /^[A-Za-z0-9._-]{1,255}\.warc\.gz$/;

export class WarcArchive {
  private readonly opts: Required<Omit<WarcArchiveOptions, "thread">>;
  /** the writers, on the writer thread or this one */
  private readonly writers: Pick<WarcWriters, "write" | "closeCrawl" | "close">;
  /** crawls with a writer open, and when each last wrote */
  private readonly lastUsed = new Map<string, number>();
  /** origins whose robots.txt each open writer archived */
  private readonly robotsWritten = new Map<string, Set<string>>();
  private readonly host: string;
  private readonly hostBase: string;
  private readonly sums = new Map<string, { key: string; sha256: string }>();
  private timer: NodeJS.Timeout | null = null;
  private readonly owners = new Set<string>();

  constructor(opts: WarcArchiveOptions) {
    this.opts = { now: Date.now, prefix: "TRAWL", software: "Trawl", idleCloseMs: 30_000, ...opts };
    this.hostBase = hostname().replace(/[^A-Za-z0-9-]/g, "-").slice(0, 60);
    this.host = `${this.hostBase}-${process.pid}`;
    const writers = { root: this.opts.root, maxFileBytes: this.opts.maxFileBytes, prefix: this.opts.prefix, host: this.host, software: this.opts.software };
    this.writers = (opts.thread ?? opts.now === undefined)
      ? new WarcWriteThread(writers)
      : new WarcWriters({ ...writers, now: this.opts.now }, (crawlId) => this.crawlDir(crawlId));
  }

  /** The directory of every job's archives. */
  get root(): string {
    return this.opts.root;
  }

  crawlDir(crawlId: string): string {
    if (!SAFE_ID.test(crawlId)) throw new Error(`not a crawl id: ${crawlId}`);
    return join(this.opts.root, crawlId);
  }

  /** Writes the items with the crawl's writer (opened when it has none). */
  private write(crawlId: string, items: WarcItem[]): Promise<void> {
    this.crawlDir(crawlId); // a crawl id that is not one throws here, not on the writer thread
    this.lastUsed.set(crawlId, this.opts.now());
    this.timer ??= setInterval(() => void this.closeIdle(), Math.max(1000, this.opts.idleCloseMs / 2)).unref();
    return this.writers.write(crawlId, items);
  }

  /** Closes the crawl's writer, when it has one. */
  private async closeWriter(crawlId: string): Promise<void> {
    if (!this.lastUsed.delete(crawlId)) return;
    this.robotsWritten.delete(crawlId);
    await this.writers.closeCrawl(crawlId);
  }

  /**
   * Records the job's owner beside its archives (owner.json, once per process and job): the archives are served to
   * that team, also after the job's record has expired when WARC_RETENTION_HOURS is longer than the results'.
   */
  async own(crawlId: string, owner: WarcOwner): Promise<void> {
    if (this.owners.has(crawlId)) return;
    const dir = this.crawlDir(crawlId);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "owner.json"), JSON.stringify(owner));
    if (this.owners.size > 10_000) this.owners.clear();
    this.owners.add(crawlId);
  }

  /** The owner recorded beside the job's archives, or null. */
  async owner(crawlId: string): Promise<WarcOwner | null> {
    try {
      return JSON.parse(await readFile(join(this.crawlDir(crawlId), "owner.json"), "utf8")) as WarcOwner;
    } catch {
      return null;
    }
  }

  /** Archives the exchanges of one fetched URL (redirect hops first), awaiting the bytes on disk. */
  async archive(exchanges: { exchange: HttpExchange; context: ExchangeContext }[], crawlId: string): Promise<void> {
    if (exchanges.length === 0) return;
    await this.write(crawlId, exchanges.map(({ exchange, context }) => ({ kind: "exchange" as const, exchange, context })));
  }

  /** Archives the rendered DOM of a page (a conversion record). */
  async archiveRendered(crawlId: string, url: string, html: string, depth: number, at = this.opts.now()): Promise<void> {
    await this.write(crawlId, [{ kind: "rendered", url, html, depth, at }]);
  }

  /** Archives a robots.txt exchange once per crawl and origin (per process). */
  async archiveRobots(crawlId: string, origin: string, exchanges: HttpExchange[]): Promise<void> {
    const written = this.robotsWritten.get(crawlId) ?? new Set<string>();
    if (written.has(origin)) return;
    written.add(origin);
    this.robotsWritten.set(crawlId, written);
    await this.archive(exchanges.map((exchange) => ({ exchange, context: { crawlId, role: "robots" as const } })), crawlId);
  }

  async closeIdle(): Promise<void> {
    const cutoff = this.opts.now() - this.opts.idleCloseMs;
    for (const [id, lastUsed] of this.lastUsed) if (lastUsed < cutoff) await this.closeWriter(id);
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.lastUsed.clear();
    this.robotsWritten.clear();
    await this.writers.close();
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
      const copy = await uploaded(path);
      out.push({ name, bytes: st.size, sha256: sum.sha256, ...(copy ? { s3: copy.url } : {}) });
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
    await this.closeWriter(crawlId);
    await rm(this.crawlDir(crawlId), { recursive: true, force: true });
  }

  /**
   * Cuts the torn tails of files no writer extends any more (warc-repair.ts): last written before `before`, or
   * written by a process of this machine that is gone (its pid is in the file's name).
   */
  repair(before: number): Promise<CutTail[]> {
    const mine = new RegExp(`-${this.hostBase.replace(/[^A-Za-z0-9-]/g, "")}-(\\d+)\\.warc\\.gz$`);
    return cutTornTails(this.opts.root, before, (name) => {
      const pid = Number(mine.exec(name)?.[1] ?? 0);
      return pid > 0 && pid !== process.pid && !alive(pid);
    });
  }

  /** When the job's archives were last written (epoch ms; 0: none). */
  async lastWritten(crawlId: string): Promise<number> {
    const dir = this.crawlDir(crawlId);
    const names = await readdir(dir).catch(() => [] as string[]);
    let last = 0;
    for (const name of names) last = Math.max(last, (await stat(join(dir, name)).catch(() => null))?.mtimeMs ?? 0);
    return last;
  }

  /** Deletes the archives last written before `before` whose job is not running; the ids deleted. */
  async deleteExpired(before: number, running: (crawlId: string) => Promise<boolean>): Promise<string[]> {
    const ids = (await readdir(this.opts.root).catch(() => [] as string[])).filter((n) => SAFE_ID.test(n));
    const gone: string[] = [];
    for (const id of ids) {
      if (this.lastUsed.has(id) || (await this.lastWritten(id)) >= before || (await running(id))) continue;
      await this.remove(id);
      gone.push(id);
    }
    return gone;
  }
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(path).on("data", (c) => hash.update(c)).on("error", reject).on("end", () => resolve(hash.digest("hex")));
  });
}
