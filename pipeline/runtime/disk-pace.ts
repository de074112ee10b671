// Whether a disk's synchronous writes are slow, for every append log on it (append-log.ts writes small batches on the
// calling thread while they are fast, and through libuv's thread pool while the disk is slow).
import { statSync } from "node:fs";

const SLOW_DISK_BACKOFF_MS = 10_000;
const SLOW_DISK_BACKOFF_MAX_MS = 300_000;

/**
 * Whether a disk's synchronous writes are slow, for every log on it. Each log kept its own state before: under
 * write-back throttling every log (a bus partition's, a crawl's URL log, the journal...) found it out with a write that
 * held the event loop, and again every 10 s (stalls of 150-220 ms in a 200,000-page embedded crawl on a loaded
 * machine). Now one slow write sends every log on the device to the thread pool for
 * SLOW_DISK_BACKOFF_MS, doubled (up to SLOW_DISK_BACKOFF_MAX_MS) each time the first write after it is slow again.
 */
export class DiskPace {
  private static readonly byDevice = new Map<number, DiskPace>();
  private asyncUntil = 0;
  private backoffMs = SLOW_DISK_BACKOFF_MS;

  /** The pace of the device that holds `dir` (one per device, shared). */
  static of(dir: string): DiskPace {
    const dev = statSync(dir).dev;
    let pace = DiskPace.byDevice.get(dev);
    if (!pace) DiskPace.byDevice.set(dev, (pace = new DiskPace()));
    return pace;
  }

  /** Writes go through the thread pool at `now` (ms since the epoch). */
  pooled(now: number): boolean {
    return now < this.asyncUntil;
  }

  /** A synchronous write ended at `now`, slow or not. */
  wrote(slow: boolean, now: number): void {
    if (slow) {
      this.asyncUntil = now + this.backoffMs;
      this.backoffMs = Math.min(2 * this.backoffMs, SLOW_DISK_BACKOFF_MAX_MS);
    } else if (now >= this.asyncUntil) this.backoffMs = SLOW_DISK_BACKOFF_MS;
  }
}
