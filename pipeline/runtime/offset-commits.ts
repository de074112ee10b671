// Offsets of handled batches waiting to be committed: the latest offset per partition, handed to `commit` together
// once `intervalMs` after the first one arrived (0: at once). `add` resolves when that commit is done, so a caller
// that awaits it keeps the old one-commit-per-batch pacing only when the interval is 0.

export class OffsetCommits {
  private readonly intervalMs: number;
  private readonly commit: (offsets: [number, string][]) => Promise<void>;
  private pending = new Map<number, string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(intervalMs: number, commit: (offsets: [number, string][]) => Promise<void>) {
    this.intervalMs = intervalMs;
    this.commit = commit;
  }

  /** Records `offset` (the next offset to read) of a partition; with an interval, returns at once. */
  add(partition: number, offset: string): Promise<void> {
    this.pending.set(partition, offset);
    if (this.intervalMs === 0) return this.flush();
    this.timer ??= setTimeout(() => void this.flush(), this.intervalMs);
    return Promise.resolve();
  }

  /** Commits what is pending now (after any commit still running); resolves when done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.size === 0) return this.running;
    const offsets = [...this.pending];
    this.pending = new Map();
    this.running = this.running.then(() => this.commit(offsets));
    return this.running;
  }
}
