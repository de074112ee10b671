// Which crawls were cancelled, read from the store with a short cache (ttlMs 0 = always ask).
import type { CrawlStore } from "./crawl-store.ts";

export class CancelCache {
  private readonly store: CrawlStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly checkedAt = new Map<string, number>();
  private readonly cancelled = new Set<string>();

  constructor(store: CrawlStore, ttlMs: number, now: () => number) {
    this.store = store;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The subset of `crawlIds` that is cancelled. */
  async check(crawlIds: Iterable<string>): Promise<Set<string>> {
    const ids = [...new Set(crawlIds)];
    const t = this.now();
    const stale = ids.filter((id) => !this.cancelled.has(id) && (this.ttlMs === 0 || t - (this.checkedAt.get(id) ?? -Infinity) > this.ttlMs));
    if (stale.length) {
      for (const id of await this.store.cancelled(stale)) this.cancelled.add(id);
      for (const id of stale) this.checkedAt.set(id, t);
      if (this.checkedAt.size > 50000) this.checkedAt.clear();
    }
    return new Set(ids.filter((id) => this.cancelled.has(id)));
  }
}
