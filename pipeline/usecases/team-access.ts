// What a request may do on behalf of its team: its key's verification and the failed attempts of its address, credits
// (402 when a job would exceed them; reserved before the job, settled after: credit-reservations.ts), and the team
// list cache.
import type { CrawlOptions } from "../../schemas/index.ts";
import type { AuthStore, TeamRow } from "../store/auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { TrawlError } from "../runtime/errors.ts";
import { FailureLimiter } from "./auth-failures.ts";
import { KeyVerifier } from "./key-verifier.ts";
import { remainingCredits } from "./credits.ts";
import { CreditReservations, UNLIMITED, withCreditCap, type Reservation } from "./credit-reservations.ts";

/**
 * The longest admit() holds a monitor check's budget: until its crawl record is in the store (which then holds it),
 * or this long when the record never comes (the submit failed); and the longest an append's credits are held until
 * the batch's record shows its budget raised by them.
 */
const BUDGET_HANDOVER_MS = 60_000;

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
  /**
   * CREDIT_BUDGET_PER_PAGE: a crawl's or batch's budget is at most this many credits per page of its `limit` (a
   * batch's: its URLs), and an append's at most this many per URL.
   */
  private readonly budgetPerPage: number;
  private teams: { list: TeamRow[]; until: number } = { list: [], until: 0 };

  constructor(deps: {
    store: CrawlStore; auth: AuthStore; cacheTtlMs: number; now: () => number;
    /** AUTH_HASH_CONCURRENCY, AUTH_FAILURE_LIMIT (0: none) and AUTH_FAILURE_WINDOW_MS; defaults: 1, none. */
    hashConcurrency?: number; failureLimit?: number; failureWindowMs?: number;
    /** CREDIT_BUDGET_PER_PAGE (default 10) */
    budgetPerPage?: number;
  }) {
    this.budgetPerPage = deps.budgetPerPage ?? 10;
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
    return this.teamList(teamId).then((teams) => remainingCredits({ store: this.store, auth: this.auth }, teamId, teams, (crawls, budgets) => this.handedOver(crawls, budgets)));
  }

  /** Budgets admit() holds for crawls not yet in the store, by crawl id. */
  private readonly handovers = new Map<string, Reservation>();
  /** Credits of appends held until their batch's record has a budget of at least `atLeast` (appended()). */
  private readonly appends = new Set<{ crawlId: string; atLeast: number; held: Reservation }>();

  /**
   * Drops the holds of crawls whose records are in the store now (they hold their budgets themselves), and those of
   * appends whose batch's record holds them (its budget raised) or that ended (its use is counted, nothing more).
   */
  private handedOver(stored: ReadonlySet<string>, budgets: ReadonlyMap<string, number>): void {
    for (const [id, held] of this.handovers) {
      if (!stored.has(id)) continue;
      this.handovers.delete(id);
      held.release();
    }
    for (const a of this.appends) {
      if ((budgets.get(a.crawlId) ?? Infinity) < a.atLeast) continue;
      this.appends.delete(a);
      a.held.release();
    }
  }

  /** The team's balance (-1: unlimited; undefined: no such team, e.g. "bypass"). */
  async balance(teamId: string): Promise<number | undefined> {
    return (await this.teamList(teamId)).find((t) => t.teamId === teamId)?.credits;
  }

  /** Keeps a finished job's credits in the ledger (scrapes, maps: jobs that are not crawl records). */
  recordUsage(teamId: string, jobId: string, credits: number): Promise<void> {
    return this.auth.recordUsage([{ teamId, jobId, credits, at: this.now() }]);
  }

  /** Credits held by this process's running jobs (none once they ended: nothing leaks). */
  readonly reservations = new CreditReservations();

  /** Credits left to a new job: the balance minus what the team committed (credits.ts) and this process's holds. */
  private async left(teamId: string): Promise<number> {
    return (await this.remaining(teamId)) - this.reservations.heldBy(teamId);
  }

  /**
   * Reserves the credits of a job that needs at least `required`: refused (CreditsError) when fewer are left, or none;
   * else granted what is left (a PDF is parsed up to the pages they pay for), of which the job holds `required` while
   * it runs, and is billed at most what is left when it ends (settle()). `budget`: a crawl's or batch's, granted at
   * most that many of the credits left and holding all it is granted while it runs.
   */
  reserve(teamId: string, required: number, budget?: number): Promise<Reservation> {
    return this.reservations.exclusive(teamId, async () => {
      const left = await this.left(teamId);
      if (left === Infinity) return UNLIMITED;
      if (left < required || left <= 0) throw new CreditsError();
      const granted = budget === undefined ? left : Math.min(left, Math.max(required, budget));
      return this.reservations.hold(teamId, granted, budget === undefined ? required : granted, () => this.left(teamId));
    });
  }

  /**
   * A crawl's or batch's credits (at least `required`: 1 for a crawl, one per URL for a batch): its `limit` is lowered
   * to the credits left (the anchor's rule), and the credits left, up to CREDIT_BUDGET_PER_PAGE per page of that limit
   * (a batch's limit is its URLs), so that a small job does not hold a large balance from the team's other jobs,
   * become its budget (`maxCredits`: the frontier bills it no more;
   * `pdf.creditPages`: a PDF is parsed up to there). The reservation holds them until the crawl record, which then
   * holds them while the crawl runs, is written: settle it after the submit (and on every path).
   */
  async admitJob(teamId: string, options: CrawlOptions, required = 1): Promise<Reservation> {
    const held = await this.reserve(teamId, required, options.limit * this.budgetPerPage);
    if (held.credits !== Infinity) Object.assign(options, withCreditCap(options, held.credits), { limit: Math.min(options.limit, held.credits), maxCredits: held.credits });
    return held;
  }

  /**
   * The credits of `urls` URLs appended to a running batch: at least 1 each (CreditsError when fewer are left), up to
   * CREDIT_BUDGET_PER_PAGE each, at most what is left; held until appended() hands them over to the batch's budget
   * (settle or release them when the append fails before that).
   */
  appendBudget(teamId: string, urls: number): Promise<Reservation> {
    return this.reserve(teamId, urls, urls * this.budgetPerPage);
  }

  /**
   * An append's credits were sent to the frontier, which raises the batch's budget by them: they are held until the
   * batch's record has a budget of at least `atLeast` (its budget when the append was admitted plus them; above the
   * raises of this process's appends to it still held, which the frontier may apply first) or the batch ended, at
   * most BUDGET_HANDOVER_MS.
   */
  appended(crawlId: string, held: Reservation, atLeast: number): void {
    if (held.credits === Infinity) return;
    for (const a of this.appends) if (a.crawlId === crawlId) atLeast = Math.max(atLeast, a.atLeast + held.credits);
    const entry = { crawlId, atLeast, held };
    this.appends.add(entry);
    setTimeout(() => {
      this.appends.delete(entry);
      held.release();
    }, BUDGET_HANDOVER_MS).unref();
  }

  /**
   * Refuses a job that needs `required` credits the team does not have. A job with a `limit` is lowered to the
   * credits left when some are left (the anchor's rule); returns the limit to use. Holds nothing, unless `budget` (a
   * monitor check's crawl or batch, and its id) is given the credits left as admitJob() gives them: they are then held
   * until the crawl record, which holds them while it runs, is in the store (at most BUDGET_HANDOVER_MS).
   */
  async admit(teamId: string, required: number, limit?: number, budget?: { options: CrawlOptions; crawlId: string }): Promise<number | undefined> {
    if (budget) {
      const held = await this.admitJob(teamId, budget.options, limit !== undefined ? 1 : required);
      if (held.credits !== Infinity) {
        this.handovers.get(budget.crawlId)?.release();
        this.handovers.set(budget.crawlId, held);
        setTimeout(() => {
          if (this.handovers.get(budget.crawlId) === held) this.handovers.delete(budget.crawlId);
          void held.settle(0);
        }, BUDGET_HANDOVER_MS).unref();
      }
      return limit !== undefined ? budget.options.limit : limit;
    }
    const held = await this.reserve(teamId, limit !== undefined ? 1 : required);
    held.release();
    return limit !== undefined && held.credits !== Infinity ? Math.min(limit, held.credits) : limit;
  }
}
