// A start waits for its servers (ClickHouse, Kafka, the Schema Registry) for a bounded time, INFRA_START_WAIT_S in
// all, then stops with INFRA_UNREACHABLE naming the variable that points at the server it could not reach. Without
// the bound an unreachable Kafka kept a start waiting for many minutes (the Kafka client's own retries inside each of
// twenty attempts), logging only the client's warnings and never a line that says what is wrong.
import { TrawlError } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { retry, type RetryOptions } from "./retry.ts";

/** One server a start waits for: what it is, the variable that names it, and where it is (no credentials). */
export interface Awaited {
  server: string;
  variable: string;
  where: string;
}

/** `url` without its user and password (a URL may carry them), or the text as it is when it is not a URL. */
export function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = "";
    u.password = "";
    return u.toString();
  } catch {
    return url;
  }
}

export class StartDeadline {
  private readonly end: number;
  private readonly waitMs: number;
  private readonly now: () => number;
  private readonly log: Logger;

  constructor(waitMs: number, log: Logger, now: () => number = Date.now) {
    this.waitMs = waitMs;
    this.log = log;
    this.now = now;
    this.end = now() + waitMs;
  }

  /**
   * Runs `fn` with `opts`' retries until it succeeds, fails for good, or the start's time is up: then throws
   * INFRA_UNREACHABLE with the last error. An attempt still running at the deadline is not awaited.
   */
  async run<T>(what: Awaited, fn: () => Promise<T>, opts: RetryOptions): Promise<T> {
    let last: unknown;
    const attempts = retry(fn, {
      ...opts,
      retries: Number.MAX_SAFE_INTEGER,
      retriable: (err) => opts.retriable(err) && this.now() < this.end,
      onRetry: (err, attempt, delay) => {
        last = err;
        this.log.warn({ server: what.server, variable: what.variable, err: (err as Error).message, attempt, retryInMs: delay }, `waiting for ${what.server}`);
        opts.onRetry?.(err, attempt, delay);
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.unreachable(what, last)), Math.max(0, this.end - this.now()));
      timer.unref();
    });
    try {
      return await Promise.race([attempts.catch((err: unknown) => {
        throw opts.retriable(err) ? this.unreachable(what, err) : err;
      }), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private unreachable(what: Awaited, err: unknown): TrawlError {
    const reason = err === undefined ? "no answer yet" : (err as Error).message;
    return new TrawlError(
      "INFRA_UNREACHABLE",
      `could not reach ${what.server} at ${what.variable}=${withoutCredentials(what.where)} within INFRA_START_WAIT_S=${Math.round(this.waitMs / 1000)} s (last error: ${reason}); check that it runs and that this address reaches it`,
      { cause: err },
    );
  }
}
