// The per-team concurrency limit, pure: the jobs of one team that run and those that wait (oldest first), and which
// of the waiting ones may start. No I/O: the adapter (admission.ts) loads a team's queue from the crawl records and
// turns the admitted jobs into Admitted messages for the frontier.
import type { CrawlRecord } from "../store/crawl-store.ts";

export interface TeamQueue {
  running: Set<string>;
  /** oldest first */
  waiting: { crawlId: string; at: number }[];
}

export interface Admission {
  crawlId: string;
  /** it had to wait for a slot (it was not admitted by its own JobQueued) */
  limited: boolean;
  queuedMs: number;
}

/** Whether a crawl record is held by its team's limit (queued, not yet admitted). */
export const isHeld = (record: Pick<CrawlRecord, "options">) => record.options.teamQueue !== undefined && record.options.teamQueue.admittedAt === undefined;

/**
 * A team's queue rebuilt from its unfinished crawl records (after a start or a rebalance): held ones wait in the
 * order they were queued, the others run. A version-0 record (the frontier has not seen it yet) is left out: its
 * JobQueued is still on its way.
 */
export function queueOf(active: CrawlRecord[]): TeamQueue {
  const q: TeamQueue = { running: new Set(), waiting: [] };
  for (const r of active) {
    if (r.version === 0 || r.status !== "scraping") continue;
    if (isHeld(r)) q.waiting.push({ crawlId: r.crawlId, at: r.options.teamQueue?.queuedAt ?? r.createdAt });
    else q.running.add(r.crawlId);
  }
  q.waiting.sort((a, b) => a.at - b.at || (a.crawlId < b.crawlId ? -1 : 1));
  return q;
}

/** A job asks to run (a replay of a job already known changes nothing). */
export function enqueueJob(q: TeamQueue, crawlId: string, at: number): void {
  if (q.running.has(crawlId) || q.waiting.some((w) => w.crawlId === crawlId)) return;
  q.waiting.push({ crawlId, at });
}

/** A job ended (running or still waiting): its slot or its place is freed. */
export function endJob(q: TeamQueue, crawlId: string): void {
  q.running.delete(crawlId);
  q.waiting = q.waiting.filter((w) => w.crawlId !== crawlId);
}

/**
 * Starts waiting jobs, oldest first, while the team runs fewer than `limit` (0: no limit). `trigger` is the job whose
 * own JobQueued is being handled: admitted at once, it did not wait.
 */
export function admit(q: TeamQueue, limit: number, now: number, trigger?: string): Admission[] {
  const out: Admission[] = [];
  while (q.waiting.length > 0 && (limit <= 0 || q.running.size < limit)) {
    const next = q.waiting.shift() as { crawlId: string; at: number };
    q.running.add(next.crawlId);
    out.push({ crawlId: next.crawlId, limited: next.crawlId !== trigger, queuedMs: Math.max(0, now - next.at) });
  }
  return out;
}
