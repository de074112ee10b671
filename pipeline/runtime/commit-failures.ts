// When a consumer's offset commits "keep failing", so that it must rejoin its group instead of running on. One failed
// commit is expected now and then (a rebalance took the partitions; the broker restarts): the messages are delivered
// again and the next commit covers them. But a consumer whose group coordinator died keeps it cached ("Broker N not
// found in the cached metadata"): every later commit fails while its fetches from the partitions' leaders go on, and
// the committed offsets fall further behind until a crash replays everything since. Rejoining (the consumer stopped and
// started again) finds the coordinator anew; what was handled since the last good commit is delivered again, which
// every stage handles idempotently.
//
// Keep failing = COMMIT_FAILURES_MAX consecutive failures, or a failure while the first of the run is
// COMMIT_FAILING_MAX_MS old or more (commits are spaced by KAFKA_COMMIT_INTERVAL_MS and only made after batches, so a
// quiet consumer fails rarely but for long). A success ends the run.

export const COMMIT_FAILURES_MAX = 3;
export const COMMIT_FAILING_MAX_MS = 30_000;

export class CommitFailures {
  private failures = 0;
  private firstAt = 0;
  private readonly now: () => number;

  constructor(now: () => number = Date.now) {
    this.now = now;
  }

  /** A commit succeeded: the run of failures ends. */
  succeeded(): void {
    this.failures = 0;
  }

  /** A commit failed; true when the consumer must rejoin (then the run starts over). */
  failed(): boolean {
    const now = this.now();
    if (this.failures === 0) this.firstAt = now;
    this.failures++;
    if (this.failures < COMMIT_FAILURES_MAX && now - this.firstAt < COMMIT_FAILING_MAX_MS) return false;
    this.failures = 0;
    return true;
  }

  /** Consecutive failures so far (for the log). */
  get count(): number {
    return this.failures;
  }
}
