// Fair turns between the groups waiting for one resource (the crawls waiting for one host): each group keeps its own
// queue in arrival order, and the groups take turns, round robin, so a crawl with a thousand pages waiting for a host
// does not make a crawl with ten wait behind all of them (deficit-free round robin, as BUbiNG's and Heritrix's per-host
// queues serve their crawls in turn). A group whose first item cannot go now (its own crawl's gate is full) keeps its
// place and the next group goes. Pure: no timers, no I/O; politeness.ts says when a turn is free.

export class FairTurns<T> {
  /** Waiting items per group; the Map's order is the order of turns (a group that just went moves to the back). */
  private readonly groups = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(group: string, item: T): void {
    const queue = this.groups.get(group);
    if (queue) queue.push(item);
    else this.groups.set(group, [item]);
    this.count++;
  }

  /**
   * The first item of the first group, in turn, whose first item `ready` accepts; that group then goes to the back
   * of the turns. Undefined when no group's first item is ready (none is taken).
   */
  take(ready: (item: T, group: string) => boolean = () => true): T | undefined {
    for (const [group, queue] of this.groups) {
      const head = queue[0] as T;
      if (!ready(head, group)) continue;
      queue.shift();
      this.count--;
      this.groups.delete(group);
      if (queue.length) this.groups.set(group, queue);
      return head;
    }
    return undefined;
  }

  /** Takes `item` out wherever it waits (a waiter that gave up); false when it was not waiting. */
  remove(item: T): boolean {
    for (const [group, queue] of this.groups) {
      const at = queue.indexOf(item);
      if (at < 0) continue;
      queue.splice(at, 1);
      this.count--;
      if (!queue.length) this.groups.delete(group);
      return true;
    }
    return false;
  }

  /** Takes every item out, in turn order. */
  drain(): T[] {
    const out: T[] = [];
    for (let x = this.take(); x !== undefined; x = this.take()) out.push(x);
    return out;
  }

  /** The first item of every group, in turn order. */
  *heads(): IterableIterator<T> {
    for (const queue of this.groups.values()) yield queue[0] as T;
  }
}
