// What a request may do on behalf of its team: its key's verification and the failed attempts of its address, credits
// (402 when a job would exceed them), and the team list cache.
import type { AuthStore, TeamRow } from "../store/auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { TrawlError } from "../runtime/errors.ts";
import { FailureLimiter } from "./auth-failures.ts";
import { KeyVerifier } from "./key-verifier.ts";
import { remainingCredits } from "./credits.ts";

export const INSUFFICIENT_CREDITS = "Insufficient credits to perform this request. For more credits, ask the operator of this Trawl instance to raise your team's balance (npx trawl teams credits).";

/** A job that would exceed the team's credits (HTTP 402). */
export class CreditsError extends TrawlError {
  constructor() {
    super("INSUFFICIENT_CREDITS", INSUFFICIENT_CREDITS);
    this.name = "CreditsError";
  }
}

export class TeamAccess {
  readonly verifier: KeyVerifier;
  /** Failed key attempts per client address: past the limit, no key of that address is hashed. */
  readonly failures: FailureLimiter;
  private readonly store: CrawlStore;
  private readonly auth: AuthStore;
  private readonly cacheTtlMs: number;
  private readonly now: () => number;
  private teams: { list: TeamRow[]; until: number } = { list: [], until: 0 };

  constructor(deps: {
    store: CrawlStore; auth: AuthStore; cacheTtlMs: number; now: () => number;
    /** AUTH_HASH_CONCURRENCY, AUTH_FAILURE_LIMIT (0: none) and AUTH_FAILURE_WINDOW_MS; defaults: 1, none. */
    hashConcurrency?: number; failureLimit?: number; failureWindowMs?: number;
  }) {
    this.store = deps.store;
    this.auth = deps.auth;
    this.cacheTtlMs = deps.cacheTtlMs;
    this.now = deps.now;
    this.verifier = new KeyVerifier({ store: deps.auth, cacheTtlMs: deps.cacheTtlMs, now: deps.now, ...(deps.hashConcurrency ? { hashConcurrency: deps.hashConcurrency } : {}) });
    this.failures = new FailureLimiter(deps.failureLimit ?? 0, deps.failureWindowMs ?? 60_000, deps.now);
  }

  /** The cached team list; read again when it is old or lacks `teamId` (a team made since: its balance applies at once). */
  private async teamList(teamId: string): Promise<TeamRow[]> {
    const now = this.now();
    if (this.teams.until <= now || !this.teams.list.some((t) => t.teamId === teamId)) {
      this.teams = { list: await this.auth.listTeams(), until: now + this.cacheTtlMs };
    }
    return this.teams.list;
  }

  remaining(teamId: string): Promise<number> {
    return this.teamList(teamId).then((teams) => remainingCredits({ store: this.store, auth: this.auth }, teamId, teams));
  }

  /** The team's balance (-1: unlimited; undefined: no such team, e.g. "bypass"). */
  async balance(teamId: string): Promise<number | undefined> {
    return (await this.teamList(teamId)).find((t) => t.teamId === teamId)?.credits;
  }

  /** Keeps a finished job's credits in the ledger (scrapes, maps: jobs that are not crawl records). */
  recordUsage(teamId: string, jobId: string, credits: number): Promise<void> {
    return this.auth.recordUsage([{ teamId, jobId, credits, at: this.now() }]);
  }

  /**
   * Refuses a job that needs `required` credits the team does not have. A job with a `limit` is lowered to the
   * credits left when some are left (the anchor's rule); returns the limit to use.
   */
  async admit(teamId: string, required: number, limit?: number): Promise<number | undefined> {
    const left = await this.remaining(teamId);
    if (limit !== undefined && left > 0) return Math.min(limit, left);
    if (left < required || left <= 0) throw new CreditsError();
    return limit;
  }
}
