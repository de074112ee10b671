// GET /v2/team/credit-usage, /v2/team/token-usage, /v2/team/queue-status and /v2/concurrency-check.
// Without database authentication there is no plan and no billing: the plan is a notional unlimited allowance and
// the "billing period" is the retention window, the span whose jobs Trawl still holds. Credits used are counted
// from the real jobs of that window: crawls' creditsUsed plus the usage rows of scrapes, maps and searches.
import type { QueueStat } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import type { CrawlStore } from "../store/crawl-store.ts";

/** The allowance reported as plan credits / tokens when authentication is off (unlimited in fact). */
export const UNLIMITED = 99_999_999;

export interface UsageDeps {
  store: CrawlStore;
  clock: Clock;
}

function period(now: number) {
  return { billingPeriodStart: new Date(now - RETENTION_MS).toISOString(), billingPeriodEnd: new Date(now).toISOString() };
}

export async function creditUsage(deps: UsageDeps, teamId: string) {
  const now = deps.clock.now();
  const { credits } = await deps.store.usageSince(teamId, now - RETENTION_MS);
  return { remainingCredits: Math.max(0, UNLIMITED - credits), planCredits: UNLIMITED, creditsUsed: credits, ...period(now) };
}

export async function tokenUsage(deps: UsageDeps, teamId: string) {
  const now = deps.clock.now();
  const { tokens } = await deps.store.usageSince(teamId, now - RETENTION_MS);
  return { remainingTokens: Math.max(0, UNLIMITED - tokens), planTokens: UNLIMITED, tokensUsed: tokens, ...period(now) };
}

const lagOf = (stats: QueueStat[], topic: string) => stats.filter((q) => q.topic.endsWith(topic)).reduce((sum, q) => sum + q.lag, 0);

/**
 * Page jobs per the real queues: waiting = page tasks not yet fetched (fetch.tasks not yet committed by
 * fetch-render, the ones being fetched included); active = pages fetched and not yet stored (pages.fetched and
 * crawl.pages not yet committed by convert and sink). maxConcurrency = FETCH_CONCURRENCY of one fetch-render process.
 */
export async function queueStatus(deps: UsageDeps & { queueStats?: () => Promise<QueueStat[]> }, maxConcurrency: number) {
  const stats = deps.queueStats ? await deps.queueStats() : [];
  const waiting = lagOf(stats, "fetch.tasks");
  const active = lagOf(stats, "pages.fetched") + lagOf(stats, "crawl.pages");
  const last = await deps.store.mostRecentSuccess(deps.clock.now() - RETENTION_MS);
  return {
    jobsInQueue: waiting + active,
    activeJobsInQueue: active,
    waitingJobsInQueue: waiting,
    maxConcurrency,
    mostRecentSuccess: last === null ? null : new Date(last).toISOString(),
  };
}

/** Pages being fetched at most right now (page tasks handed to fetch-render, capped by its concurrency). */
export async function concurrency(deps: { queueStats?: () => Promise<QueueStat[]> }, maxConcurrency: number) {
  const stats = deps.queueStats ? await deps.queueStats() : [];
  return { concurrency: Math.min(lagOf(stats, "fetch.tasks"), maxConcurrency), maxConcurrency };
}
