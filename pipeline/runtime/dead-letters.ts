// The dead letters of this process, counted by topic and error code: /metrics exports them
// (trawl_dead_letters_total) and the admin page lists them. A message is dead-lettered only for what retrying can never
// fix (a bug, a message that cannot be decoded or fails its schema): infrastructure failures are retried (errors.ts).
// Kept per process (every Trawl started in one process, as the tests do, shares the tally).

/** One topic and code, and how many of its messages this process dead-lettered. */
export interface DeadLetterCount {
  topic: string;
  code: string;
  count: number;
}

const counts = new Map<string, DeadLetterCount>();
const listeners = new Set<(topic: string, code: string) => void>();

/** Notes one dead letter (batch.ts, where every dead letter is made). */
export function deadLettered(topic: string, code: string): void {
  const key = `${topic}\u0000${code}`;
  const c = counts.get(key) ?? { topic, code, count: 0 };
  c.count++;
  counts.set(key, c);
  for (const l of listeners) l(topic, code);
}

/** The dead letters of this process so far, by topic and code. */
export function deadLetterCounts(): DeadLetterCount[] {
  return [...counts.values()].map((c) => ({ ...c })).sort((a, b) => a.topic.localeCompare(b.topic) || a.code.localeCompare(b.code));
}
