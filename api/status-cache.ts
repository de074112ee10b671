// GET /v2/crawl/:id answers shared for a moment inside one API process. 200 readers polling one crawl would each cost
// the store a few queries (ClickHouse is built for scans, not hundreds of point reads a second); with this cache the
// store sees about one read per distinct page of results per STATUS_CACHE_MS, and readers who arrive while that read
// runs wait for it instead of starting their own (single flight). A reader sees the state of at most STATUS_CACHE_MS
// ago; a crawl's entries are dropped at once when this process cancels it or hears of its end (crawl.events), so
// "completed" is never hidden behind an older "scraping". Errors (404, expired) are shared while in flight, not kept.

interface Entry {
  at: number;
  value: Promise<string>;
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
    const value = load();
    this.entries.delete(key); // re-inserted last: the Map's order is the age order eviction uses
    this.entries.set(key, { at: t, value });
    const keys = this.keysOf.get(jobId) ?? new Set<string>();
    keys.add(key);
    this.keysOf.set(jobId, keys);
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.drop(jobId, key);
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return value;
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
