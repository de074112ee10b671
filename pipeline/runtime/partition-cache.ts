// Per-key state a processor keeps in memory between messages, remembered with the partition it came from. After a
// rebalance the partitions this process no longer owns are forgotten: while another process owned them it changed
// their state in the store, and a partition that comes back must be read again, not served from a stale copy.
export class PartitionCache<V> {
  private readonly entries = new Map<string, { partition: number; value: V }>();

  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  set(key: string, partition: number, value: V): void {
    this.entries.set(key, { partition, value });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  /** [key, value] pairs, in insertion order. */
  *[Symbol.iterator](): IterableIterator<[string, V]> {
    for (const [key, e] of this.entries) yield [key, e.value];
  }

  get size(): number {
    return this.entries.size;
  }

  /** The oldest key (insertion order), for size-bounded caches. */
  oldest(): string | undefined {
    return this.entries.keys().next().value;
  }

  /** Keeps only the entries of `partitions` (the ones this process owns now); returns how many were dropped. */
  retain(partitions: readonly number[]): number {
    const owned = new Set(partitions);
    let dropped = 0;
    for (const [key, e] of this.entries) {
      if (owned.has(e.partition)) continue;
      this.entries.delete(key);
      dropped++;
    }
    return dropped;
  }
}
