// GET /v2/team/credit-usage, /v2/team/token-usage, /v2/team/queue-status and /v2/concurrency-check.
// Credits used are counted from real jobs: every crawl still in the store (its creditsUsed) plus the ledger of
// scrapes, maps, searches and expired crawls (credits.ts). With authentication off there is no plan: the plan is a
// notional unlimited allowance and there is no billing period (null: the count covers all jobs Trawl recorded).
import type { QueueStat } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import type { AuthStore } from "../store/auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { creditsUsed } from "./credits.ts";
import type { TeamAccess } from "./team-access.ts";

/** The allowance reported as plan credits / tokens when a team has no limit (authentication off: every caller). */
export const UNLIMITED = 99_999_999;

export interface UsageDeps {
  store: CrawlStore;
  clock: Clock;
  authStore?: AuthStore;
  access?: TeamAccess;
}

async function used(deps: UsageDeps, teamId: string): Promise<number> {
  if (deps.authStore) return creditsUsed({ store: deps.store, auth: deps.authStore }, teamId);
  let sum = 0;
  for (const c of (await deps.store.creditsByCrawl(teamId)).values()) sum += c;
  return sum;
}

export async function creditUsage(deps: UsageDeps, teamId: string) {
  const [count, balance] = await Promise.all([used(deps, teamId), deps.access?.balance(teamId)]);
  const limited = balance !== undefined && balance >= 0;
  const planCredits = limited ? balance : UNLIMITED;
  return { remainingCredits: Math.max(0, planCredits - count), planCredits, creditsUsed: count, billingPeriodStart: null, billingPeriodEnd: null };
}

/** No job uses LLM tokens yet (JSON extraction is not implemented): 0 used of a notional unlimited plan. */
export async function tokenUsage() {
  return { remainingTokens: UNLIMITED, planTokens: UNLIMITED, tokensUsed: 0, billingPeriodStart: null, billingPeriodEnd: null };
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
