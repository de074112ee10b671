// GET /v2/crawl/:id answers shared for a moment inside one API process. 200 readers polling one crawl would each cost
// the store a few queries (ClickHouse is built for scans, not hundreds of point reads a second); with this cache the
// store sees about one read per distinct page of results per STATUS_CACHE_MS, and readers who arrive while that read
// runs wait for it instead of starting their own (single flight). Once an answer is older than STATUS_CACHE_MS the
// next reader still gets it at once while one fresh read runs in the background (stale while revalidate), so readers
// wait on the store only for a page nobody asked for lately: a reader sees the state of at most STATUS_CACHE_MS plus
// one store read ago. A crawl's entries are dropped at once when this process cancels it or hears of its end
// (crawl.events), so "completed" is never hidden behind an older "scraping". Errors (404, expired) are shared while
// in flight, not kept.

interface Entry {
  at: number;
  value: Promise<string>;
  /** the answer arrived (a stale one may be served while a fresh one is read) */
  settled: boolean;
  refreshing: boolean;
}

export class StatusCache {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private readonly entries = new Map<string, Entry>();
  private readonly keysOf = new Map<string, Set<string>>();

  constructor(ttlMs: number, now: () => number, maxEntries = 10_000) {
    this.ttlMs = ttlMs;
    this.now = now;
    this.maxEntries = maxEntries;
  }

  /** The answer under `key` (one page of one job for one caller), read by `load` when missing or older than the TTL. */
  get(jobId: string, key: string, load: () => Promise<string>): Promise<string> {
    if (this.ttlMs <= 0) return load();
    const t = this.now();
    const hit = this.entries.get(key);
    if (hit && t - hit.at < this.ttlMs) return hit.value;
    if (hit?.settled) {
      if (!hit.refreshing) {
        hit.refreshing = true;
        const fresh = load();
        fresh.then(
          () => {
            if (this.entries.get(key) === hit) this.store(jobId, key, { at: this.now(), value: fresh, settled: true, refreshing: false });
          },
          () => {
            if (this.entries.get(key) === hit) this.drop(jobId, key); // the next reader reads (and sees the error) itself
          },
        );
      }
      return hit.value;
    }
    const value = load();
    const entry: Entry = { at: t, value, settled: false, refreshing: false };
    this.store(jobId, key, entry);
    value.then(() => (entry.settled = true), () => undefined);
    value.catch(() => {
      if (this.entries.get(key) === entry) this.drop(jobId, key);
    });
    return value;
  }

  private store(jobId: string, key: string, entry: Entry): void {
    this.entries.delete(key); // re-inserted last: the Map's order is the age order eviction uses
    this.entries.set(key, entry);
    const keys = this.keysOf.get(jobId) ?? new Set<string>();
    keys.add(key);
    this.keysOf.set(jobId, keys);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Forget every answer of a job (it was cancelled here, or it ended). */
  invalidate(jobId: string): void {
    for (const key of this.keysOf.get(jobId) ?? []) this.entries.delete(key);
    this.keysOf.delete(jobId);
  }

  private drop(jobId: string, key: string): void {
    this.entries.delete(key);
    this.keysOf.get(jobId)?.delete(key);
  }

  /** Entries held (for tests). */
  get size(): number {
    return this.entries.size;
  }
}
