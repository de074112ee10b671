// A team's usage: every crawl and batch still in the crawl store (its exact creditsUsed and tokensUsed, counted once
// per page by the frontier) plus the ledger of scrapes, maps, searches, extract jobs and crawls that expired;
// remaining credits = the team's balance minus the credits used.
import type { AuthStore, TeamRow, UsageRow } from "../store/auth-store.ts";
import type { CrawlStore, ExpiredCrawl, JobUsage } from "../store/crawl-store.ts";

export interface CreditDeps {
  store: CrawlStore;
  /** the ledger (absent: crawls only) */
  auth?: AuthStore;
}

/** Every job of a team with what it used; a crawl still in the crawl store wins over its ledger row. */
export async function teamJobs(deps: CreditDeps, teamId: string): Promise<JobUsage[]> {
  const [crawls, ledger] = await Promise.all([deps.store.usageByCrawl(teamId), deps.auth?.usage(teamId) ?? new Map<string, JobUsage>()]);
  const jobs = [...crawls.values()];
  for (const [job, usage] of ledger) if (!crawls.has(job)) jobs.push(usage);
  return jobs;
}

export const sumOf = (jobs: JobUsage[], field: "credits" | "tokens"): number => jobs.reduce((sum, j) => sum + j[field], 0);

export async function creditsUsed(deps: CreditDeps, teamId: string): Promise<number> {
  return sumOf(await teamJobs(deps, teamId), "credits");
}

/**
 * Credits a team has committed: what its jobs used, plus what its running crawls and batches may still use (their
 * `maxCredits`, the credits left when they started, minus what they used). The running crawls are read first, so a
 * crawl that ends in between is counted by its budget and then by its use, never by neither.
 */
export async function creditsCommitted(deps: CreditDeps, teamId: string): Promise<number> {
  return (await committed(deps, teamId)).credits;
}

/**
 * creditsCommitted, the ids of the team's crawls and batches in the crawl store, and the budgets (`maxCredits`) of
 * those of them that run.
 */
async function committed(deps: CreditDeps, teamId: string): Promise<{ credits: number; crawls: ReadonlySet<string>; budgets: ReadonlyMap<string, number> }> {
  const running = await deps.store.activeCrawls(teamId);
  const [crawls, ledger] = await Promise.all([deps.store.usageByCrawl(teamId), deps.auth?.usage(teamId) ?? new Map<string, JobUsage>()]);
  let sum = 0;
  const budgets = new Map<string, number>();
  for (const usage of crawls.values()) sum += usage.credits;
  for (const [job, usage] of ledger) if (!crawls.has(job)) sum += usage.credits;
  for (const c of running) {
    if (c.options.maxCredits === undefined) continue;
    sum += Math.max(0, c.options.maxCredits - (crawls.get(c.crawlId)?.credits ?? c.creditsUsed));
    budgets.set(c.crawlId, c.options.maxCredits);
  }
  return { credits: sum, crawls: new Set([...crawls.keys(), ...running.map((c) => c.crawlId)]), budgets };
}

/**
 * Credits left to a team for a new job (Infinity when its balance is unlimited or it has no team row, as with auth
 * off): its balance minus what it committed (creditsCommitted). `stored` hears the ids of its crawls in the store and
 * the budgets of those of them that run.
 */
export async function remainingCredits(deps: CreditDeps, teamId: string, teams: TeamRow[], stored?: (crawls: ReadonlySet<string>, budgets: ReadonlyMap<string, number>) => void): Promise<number> {
  const team = teams.find((t) => t.teamId === teamId);
  if (!team || team.credits < 0) return Infinity;
  const { credits, crawls, budgets } = await committed(deps, teamId);
  stored?.(crawls, budgets);
  return Math.max(0, team.credits - credits);
}

/**
 * The ledger rows that keep expiring crawls' credits and tokens (written before the crawls are deleted). They keep
 * the crawl's creation time, so the crawl stays in the same month of the historical usage.
 */
export const ledgerRows = (crawls: ExpiredCrawl[]): UsageRow[] =>
  crawls.map((c) => ({ teamId: c.teamId, jobId: c.crawlId, credits: c.creditsUsed, tokens: c.tokensUsed, at: c.createdAt }));
