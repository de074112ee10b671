// GET /v2/team/credit-usage, /v2/team/token-usage (and their /historical), /v2/team/queue-status and
// /v2/concurrency-check, all for the caller's team. Usage is counted from real jobs (credits.ts): every crawl and
// batch still in the store plus the ledger of scrapes, maps, searches, extract jobs and expired crawls. With
// authentication off there is no plan: the plan is a notional unlimited allowance and there is no billing period
// (null: the count covers all jobs Trawl recorded). Tokens are the LLM tokens of json / summary extraction with the
// llm provider (the rules provider uses none); no team has a token budget.
import type { Clock } from "../runtime/clock.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { invalidField } from "../runtime/errors.ts";
import type { AuthStore } from "../store/auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { sumOf, teamJobs } from "./credits.ts";
import type { TeamAccess } from "./team-access.ts";
import { monthlyPeriods } from "./usage-periods.ts";

/** The allowance reported as plan credits / tokens when a team has no limit (authentication off: every caller). */
export const UNLIMITED = 99_999_999;

export interface UsageDeps {
  store: CrawlStore;
  clock: Clock;
  authStore?: AuthStore;
  access?: TeamAccess;
}

const jobsOf = (deps: UsageDeps, teamId: string) => teamJobs({ store: deps.store, ...(deps.authStore ? { auth: deps.authStore } : {}) }, teamId);

export async function creditUsage(deps: UsageDeps, teamId: string) {
  const [jobs, balance] = await Promise.all([jobsOf(deps, teamId), deps.access?.balance(teamId)]);
  const count = sumOf(jobs, "credits");
  const limited = balance !== undefined && balance >= 0;
  const planCredits = limited ? balance : UNLIMITED;
  return { remainingCredits: Math.max(0, planCredits - count), planCredits, creditsUsed: count, billingPeriodStart: null, billingPeriodEnd: null };
}

/** Tokens used by the team's jobs, of a notional unlimited plan (Trawl has no token budget). */
export async function tokenUsage(deps: UsageDeps, teamId: string) {
  const used = sumOf(await jobsOf(deps, teamId), "tokens");
  return { remainingTokens: Math.max(0, UNLIMITED - used), planTokens: UNLIMITED, tokensUsed: used, billingPeriodStart: null, billingPeriodEnd: null };
}

/**
 * `byApiKey` of the historical routes: Trawl's ledger counts usage per team, not per API key, so a breakdown by key
 * is refused rather than answered with the team's totals.
 */
export function checkByApiKey(value: unknown): void {
  if (value === undefined || value === "false") return;
  if (value === "true") throw invalidField(["byApiKey"], "byApiKey is not supported by this server: usage is recorded per team, not per API key; leave byApiKey out");
  throw invalidField(["byApiKey"], "byApiKey must be true or false");
}

/** Usage per calendar month (usage-periods.ts), in the SDK's shape: `creditsUsed` or `tokensUsed` per period. */
export async function usageHistory(deps: UsageDeps, teamId: string, field: "credits" | "tokens") {
  const periods = monthlyPeriods(await jobsOf(deps, teamId), field);
  const name = field === "credits" ? "creditsUsed" : "tokensUsed";
  return periods.map((p) => ({ startDate: p.startDate, endDate: p.endDate, [name]: p.used }));
}

/** Page jobs of the team's running crawls and batches not yet done (queued, being fetched, converted or stored). */
async function outstanding(deps: Pick<UsageDeps, "store">, teamId: string): Promise<number> {
  const running = await deps.store.activeCrawls(teamId);
  return running.reduce((n, c) => n + Math.max(0, c.total - c.completed), 0);
}

/**
 * The team's page jobs, from the crawl store's counters of its running crawls and batches: jobsInQueue = pages not
 * yet done; activeJobsInQueue = those that can be in work at once (at most maxConcurrency, the FETCH_CONCURRENCY of a
 * fetch-render process: an upper bound, as other teams share the workers); waiting = the rest.
 */
export async function queueStatus(deps: UsageDeps, teamId: string, maxConcurrency: number) {
  const [jobs, last] = await Promise.all([outstanding(deps, teamId), deps.store.mostRecentSuccess(teamId, deps.clock.now() - RETENTION_MS)]);
  const active = Math.min(jobs, maxConcurrency);
  return {
    jobsInQueue: jobs,
    activeJobsInQueue: active,
    waitingJobsInQueue: jobs - active,
    maxConcurrency,
    mostRecentSuccess: last === null ? null : new Date(last).toISOString(),
  };
}

/** The team's pages in work at most right now (its outstanding page jobs, capped by the fetch concurrency). */
export async function concurrency(deps: Pick<UsageDeps, "store">, teamId: string, maxConcurrency: number) {
  return { concurrency: Math.min(await outstanding(deps, teamId), maxConcurrency), maxConcurrency };
}
