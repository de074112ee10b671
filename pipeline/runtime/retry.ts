// The one retry helper: exponential backoff with equal jitter (half of the ceiling fixed, half random, so that a retry
// never comes at once and concurrent retriers spread out).

export interface RetryOptions {
  retries: number;
  initialMs: number;
  maxMs: number;
  /** Decides whether an error is worth another attempt. */
  retriable: (err: unknown) => boolean;
  onRetry?: (err: unknown, attempt: number, delayMs: number) => void;
  /** A delay the error itself asks for (e.g. Retry-After), used instead of the backoff when given. */
  delayFor?: (err: unknown) => number | undefined;
  signal?: AbortSignal;
  random?: () => number;
}

export function backoffMs(attempt: number, initialMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

export async function retry<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (attempt >= opts.retries || !opts.retriable(err) || opts.signal?.aborted) throw err;
      const delay = opts.delayFor?.(err) ?? backoffMs(attempt, opts.initialMs, opts.maxMs, opts.random);
      opts.onRetry?.(err, attempt + 1, delay);
      await sleep(delay, opts.signal);
    }
  }
}
