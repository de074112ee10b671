// Group commit for requests to a server: while one request is in flight, the calls made meanwhile wait and then go
// out together as the next request (in call order, up to a byte budget). Under load this turns many small requests
// (one per stage batch) into few larger ones; when idle a call is sent at once, so latency grows by at most one
// request's round trip. With a linger, an idle sender also waits that long for company before it sends (Kafka's
// linger.ms). Used by the Kafka producer (one Produce request carries the emissions of every stage).

interface Pending<T> {
  items: T[];
  bytes: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class GroupSender<T> {
  private readonly send: (items: T[]) => Promise<void>;
  private readonly sizeOf: (item: T) => number;
  private readonly maxBytes: number;
  private readonly queue: Pending<T>[] = [];
  private inflight = false;
  private readonly lingerMs: number;
  private queuedBytes = 0;
  private lingering: NodeJS.Timeout | undefined;
  private readonly aloneOnFailure: (err: unknown) => boolean;
  /** Requests sent and calls they carried (for tests and metrics). */
  readonly stats = { requests: 0, calls: 0 };

  /**
   * `maxBytes`: a request takes further calls only while it stays under this size (a call is never split).
   * `aloneOnFailure(err)`: when a request carrying several calls fails with an error it accepts (data the server
   * refused, not a server that is away), each call is sent once more on its own, so only the refused call fails.
   */
  constructor(send: (items: T[]) => Promise<void>, sizeOf: (item: T) => number, maxBytes: number, lingerMs = 0, aloneOnFailure: (err: unknown) => boolean = () => false) {
    this.send = send;
    this.aloneOnFailure = aloneOnFailure;
    this.lingerMs = lingerMs;
    this.sizeOf = sizeOf;
    this.maxBytes = maxBytes;
  }

  /** Resolves once the request that carried these items succeeded; rejects with its error otherwise. */
  submit(items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const bytes = items.reduce((n, i) => n + this.sizeOf(i), 0);
      this.queue.push({ items, bytes, resolve, reject });
      this.queuedBytes += bytes;
      this.pump();
    });
  }

  private pump(): void {
    if (this.inflight || this.queue.length === 0) return;
    const full = this.queuedBytes >= this.maxBytes;
    if (this.lingering && !full) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
    if (this.lingerMs > 0 && !full) {
      this.lingering = setTimeout(() => {
        this.lingering = undefined;
        this.sendNext();
      }, this.lingerMs);
      return;
    }
    this.sendNext();
  }

  private sendSafely(items: T[]): Promise<void> {
    try {
      return this.send(items);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private sendNext(): void {
    const take: Pending<T>[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Pending<T>;
      if (take.length > 0 && bytes + next.bytes > this.maxBytes) break;
      take.push(next);
      bytes += next.bytes;
      this.queuedBytes -= next.bytes;
      this.queue.shift();
    }
    this.inflight = true;
    this.stats.requests++;
    this.stats.calls += take.length;
    this.sendSafely(take.flatMap((p) => p.items)).then(
      () => take.forEach((p) => p.resolve()),
      async (err: unknown) => {
        if (take.length === 1 || !this.aloneOnFailure(err)) return take.forEach((p) => p.reject(err));
        for (const p of take) {
          this.stats.requests++;
          await this.sendSafely(p.items).then(p.resolve, p.reject);
        }
      },
    ).finally(() => {
      this.inflight = false;
      this.pump();
    });
  }
}
