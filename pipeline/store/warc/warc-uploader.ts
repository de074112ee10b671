// Copies web archives to an S3-compatible bucket (WARC_S3_URL): every closed WARC file of a job to
// `<prefix>/<job id>/<name>`, and, once the job ended and all its files are closed and copied, its merged CDXJ index
// to `<prefix>/<job id>/index.cdxj`. The state is the marker files beside the archives (warc-markers.ts), so a
// restart, or another replica, finds what is still to copy by a scan: nothing is lost while the files are kept (the
// retention sweep keeps a job's archives until they are copied). A failed upload is retried with backoff; after
// MAX_ATTEMPTS failures in a row the uploader logs WARC_S3_UPLOAD_GAVE_UP and leaves that object for PARK_MS (or the
// next start). Uploads are idempotent: a copy made again (a kill between the upload and its marker) puts the same
// bytes under the same key. Run by the frontier role (it knows when a job ended; every replica may run it: a lease
// file gives each upload to one of them).
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../../runtime/errors.ts";
import type { Logger } from "../../runtime/logger.ts";
import { backoffMs } from "../../runtime/retry.ts";
import type { ObjectStore } from "./s3-object-store.ts";
import type { WarcArchive } from "./warc-archive.ts";
import { CLOSED, INDEX_NAME, LEASE_RENEW_MS, markUploaded, takeLease, UPLOADED, uploaded } from "./warc-markers.ts";

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;
const WARC = /\.warc\.gz$/;

export interface WarcUploaderOptions {
  archive: WarcArchive;
  objects: ObjectStore;
  /** key prefix: "" or `a/b` (WARC_S3_URL's path) */
  prefix: string;
  /** whether the job ended (completed, failed, cancelled, or no longer known) */
  ended: (jobId: string) => Promise<boolean>;
  log: Logger;
  now?: () => number;
  scanMs?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  maxAttempts?: number;
  parkMs?: number;
}

interface Failing {
  attempts: number;
  nextAt: number;
}

export interface UploadPass {
  uploaded: string[];
  failed: string[];
}

export class WarcUploader {
  private readonly o: Required<WarcUploaderOptions>;
  private readonly log: Logger;
  private readonly failing = new Map<string, Failing>();
  /** jobs whose files and index are all copied, with their folder's mtime then (a new file changes it) */
  private readonly done = new Map<string, number>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<UploadPass> | null = null;

  constructor(opts: WarcUploaderOptions) {
    this.o = { now: Date.now, scanMs: 5000, initialDelayMs: 1000, maxDelayMs: 60_000, maxAttempts: 10, parkMs: 15 * 60_000, ...opts };
    this.log = opts.log.child({ component: "warc-s3" });
  }

  key(jobId: string, name: string): string {
    return this.o.prefix ? `${this.o.prefix}/${jobId}/${name}` : `${jobId}/${name}`;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.pass().catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, "web archive upload scan failed; will retry")), this.o.scanMs);
    this.timer.unref();
    void this.pass().catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, "web archive upload scan failed; will retry"));
  }

  /** Stops scanning and aborts the upload under way (its object stays to do: copied after the restart). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopping.abort();
    await this.running?.catch(() => undefined);
    this.o.objects.close();
  }

  /** One scan of every job's archives, copying what is due; one at a time (a pass under way is joined). */
  pass(): Promise<UploadPass> {
    this.running ??= this.scan().finally(() => (this.running = null));
    return this.running;
  }

  private async scan(): Promise<UploadPass> {
    const out: UploadPass = { uploaded: [], failed: [] };
    const root = this.o.archive.root;
    const ids = (await readdir(root).catch(() => [] as string[])).filter((n) => SAFE_ID.test(n));
    for (const gone of [...this.done.keys()].filter((id) => !ids.includes(id))) this.done.delete(gone);
    for (const id of ids) {
      // a failure ends the pass: the bucket is likely unreachable, and each object waits for its own next attempt
      if (this.stopping.signal.aborted || out.failed.length > 0) break;
      const dir = join(root, id);
      const mtime = (await stat(dir).catch(() => null))?.mtimeMs;
      if (mtime === undefined || this.done.get(id) === mtime) continue;
      await this.job(id, dir, out);
    }
    return out;
  }

  private async job(id: string, dir: string, out: UploadPass): Promise<void> {
    const names = new Set(await readdir(dir).catch(() => [] as string[]));
    const warcs = [...names].filter((n) => WARC.test(n)).sort();
    if (warcs.length === 0) return;
    for (const name of warcs) {
      if (out.failed.length > 0) return;
      if (names.has(`${name}${UPLOADED}`)) continue;
      if (!names.has(`${name}${CLOSED}`)) continue; // still written to
      const path = join(dir, name);
      const key = this.key(id, name);
      const ok = await this.attempt(key, path, out, async (signal) => {
        const { bytes, sha256 } = await digest(path);
        await this.o.objects.putFile(key, path, { bytes, sha256, contentType: "application/warc" }, signal);
        await markUploaded(path, { url: this.o.objects.url(key), sha256, bytes, at: this.o.now() });
      });
      if (ok) names.add(`${name}${UPLOADED}`);
    }
    if (warcs.some((n) => !names.has(`${n}${UPLOADED}`))) return;
    if (!(await this.o.ended(id))) return;
    const indexPath = join(dir, INDEX_NAME);
    const before = await uploaded(indexPath);
    if (!before || !sameSet(before.files ?? [], warcs)) {
      const key = this.key(id, INDEX_NAME);
      const ok = await this.attempt(key, indexPath, out, async (signal) => {
        const body = Buffer.from((await this.o.archive.cdxj(id)).join(""));
        await this.o.objects.putBytes(key, body, "text/x-cdxj; charset=utf-8", signal);
        await markUploaded(indexPath, { url: this.o.objects.url(key), sha256: createHash("sha256").update(body).digest("hex"), bytes: body.length, at: this.o.now(), files: warcs });
      });
      if (!ok) return;
    }
    const mtime = (await stat(dir).catch(() => null))?.mtimeMs;
    if (mtime !== undefined) this.done.set(id, mtime);
  }

  /** Runs one upload under its lease unless it is waiting for its next attempt; true when it is done. */
  private async attempt(key: string, path: string, out: UploadPass, upload: (signal: AbortSignal) => Promise<void>): Promise<boolean> {
    const now = this.o.now();
    const state = this.failing.get(key);
    if (state && now < state.nextAt) return false;
    const lease = await takeLease(path);
    if (!lease) return false; // another uploader copies it
    const renew = setInterval(() => void lease.renew(), LEASE_RENEW_MS);
    try {
      await upload(this.stopping.signal);
      this.failing.delete(key);
      out.uploaded.push(key);
      this.log.info({ key, url: this.o.objects.url(key), ...(state ? { failedAttempts: state.attempts } : {}) }, "web archive uploaded");
      return true;
    } catch (err) {
      if (this.stopping.signal.aborted) return false;
      out.failed.push(key);
      const attempts = (state?.attempts ?? 0) + 1;
      if (attempts >= this.o.maxAttempts) {
        this.failing.set(key, { attempts: 0, nextAt: now + this.o.parkMs });
        this.log.error({ code: "WARC_S3_UPLOAD_GAVE_UP", key, attempts, retryInMs: this.o.parkMs, err: errorMessage(err) }, "web archive upload failed every attempt: left for later (kept on disk; tried again after the pause or at the next start)");
      } else {
        const delayMs = backoffMs(attempts - 1, this.o.initialDelayMs, this.o.maxDelayMs);
        this.failing.set(key, { attempts, nextAt: now + delayMs });
        this.log.warn({ code: "WARC_S3_UPLOAD_FAILED", key, attempt: attempts, delayMs, err: errorMessage(err) }, "web archive upload failed; will retry");
      }
      return false;
    } finally {
      clearInterval(renew);
      await lease.release();
    }
  }
}

/** Whether the job has archives not yet copied, its index included (retention keeps them). */
export async function copyPending(archive: WarcArchive, jobId: string): Promise<boolean> {
  const dir = archive.crawlDir(jobId);
  const names = new Set(await readdir(dir).catch(() => [] as string[]));
  const warcs = [...names].filter((n) => WARC.test(n));
  if (warcs.length === 0) return false;
  if (warcs.some((n) => !names.has(`${n}${UPLOADED}`))) return true;
  const index = await uploaded(join(dir, INDEX_NAME));
  return !index || !sameSet(index.files ?? [], warcs);
}

const sameSet = (a: string[], b: string[]): boolean => a.length === b.length && a.every((x) => b.includes(x));

function digest(path: string): Promise<{ bytes: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    let bytes = 0;
    createReadStream(path)
      .on("data", (c) => {
        bytes += c.length;
        hash.update(c);
      })
      .on("error", reject)
      .on("end", () => resolve({ bytes, sha256: hash.digest("hex") }));
  });
}
