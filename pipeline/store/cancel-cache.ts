// Which crawls were cancelled, read from the store with a short cache (ttlMs 0 = always ask). With `ended`, also the
// crawls that completed or failed: a fetch task delivered again after a crash (its offset was not committed) of a crawl
// that has ended since is dropped by fetch-render and render, not fetched nor archived.
import type { CrawlStore } from "./crawl-store.ts";

/** What a check answers: the crawls cancelled (the sink's), or every crawl that ended (fetch-render's and render's). */
export type DropWhen = "cancelled" | "ended";

export class CancelCache {
  private readonly store: CrawlStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly checkedAt = new Map<string, number>();
  private readonly cancelled = new Set<string>();
  /** reads in flight, per crawl: checks of one crawl at once (a fetch-render lane per task) share one read */
  private readonly reading = new Map<string, Promise<unknown>>();
  private readonly when: DropWhen;

  constructor(store: CrawlStore, ttlMs: number, now: () => number, when: DropWhen = "cancelled") {
    this.store = store;
    this.ttlMs = ttlMs;
    this.now = now;
    this.when = when;
  }

  /** The subset of `crawlIds` that is cancelled (or ended). A crawl found so stays so. */
  async check(crawlIds: Iterable<string>): Promise<Set<string>> {
    const ids = [...new Set(crawlIds)];
    const t = this.now();
    const stale = ids.filter((id) => !this.cancelled.has(id) && (this.ttlMs === 0 || t - (this.checkedAt.get(id) ?? -Infinity) > this.ttlMs));
    const waits = stale.filter((id) => this.reading.has(id)).map((id) => this.reading.get(id));
    const read = stale.filter((id) => !this.reading.has(id));
    if (read.length) {
      const reading = (this.when === "ended" ? this.store.ended(read) : this.store.cancelled(read)).then((cancelled) => {
        for (const id of cancelled) this.cancelled.add(id);
        for (const id of read) this.checkedAt.set(id, t);
        if (this.checkedAt.size > 50000) this.checkedAt.clear();
      }).finally(() => {
        for (const id of read) if (this.reading.get(id) === reading) this.reading.delete(id);
      });
      for (const id of read) this.reading.set(id, reading);
      waits.push(reading);
    }
    await Promise.all(waits);
    return new Set(ids.filter((id) => this.cancelled.has(id)));
  }
}
