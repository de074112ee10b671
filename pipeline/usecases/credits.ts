// A team's credits: used = every crawl still in the crawl store (its exact creditsUsed, counted once per page by the
// frontier) plus the ledger of scrapes, maps and crawls that expired; remaining = the team's balance minus that.
import type { AuthStore, TeamRow, UsageRow } from "../store/auth-store.ts";
import type { CrawlStore, ExpiredCrawl } from "../store/crawl-store.ts";

export interface CreditDeps {
  store: CrawlStore;
  auth: AuthStore;
}

export async function creditsUsed(deps: CreditDeps, teamId: string): Promise<number> {
  const [crawls, ledger] = await Promise.all([deps.store.creditsByCrawl(teamId), deps.auth.usage(teamId)]);
  let used = 0;
  for (const c of crawls.values()) used += c;
  for (const [job, c] of ledger) if (!crawls.has(job)) used += c;
  return used;
}

/** Credits left to a team (Infinity when its balance is unlimited or it has no team row, as with auth off). */
export async function remainingCredits(deps: CreditDeps, teamId: string, teams: TeamRow[]): Promise<number> {
  const team = teams.find((t) => t.teamId === teamId);
  if (!team || team.credits < 0) return Infinity;
  return Math.max(0, team.credits - (await creditsUsed(deps, teamId)));
}

/** The ledger rows that keep expiring crawls' credits (written before the crawls are deleted). */
export const ledgerRows = (crawls: ExpiredCrawl[], at: number): UsageRow[] => crawls.map((c) => ({ teamId: c.teamId, jobId: c.crawlId, credits: c.creditsUsed, at }));
