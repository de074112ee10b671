// Credits held by this process's jobs between their admission and their bill (TeamAccess.reserve). A team's
// admissions and settlements run one at a time in this process (`exclusive`), so that no two jobs are granted the same
// credits: an admission reads the stores and then this process's holds; a settlement reads what is left, writes the
// bill and then drops its hold, never while an admission is between the two. A job is billed at most what it was
// granted and what is left when it ends, so concurrent jobs cannot overdraw together. What holds across processes is in
// docs/api.md (credits).
import type { AuthStore } from "../store/auth-store.ts";

/**
 * A job's credits: at most `credits` (what the team had left when it started; Infinity: an unlimited team, or
 * authentication off), of which it holds a part while it runs (its minimum price, or a crawl's whole budget).
 */
export interface Reservation {
  readonly credits: number;
  /**
   * Bills the job: min(`cost`, `credits`, its hold plus what the team has left now), written by `write` (the ledger
   * row; nothing for a crawl, whose record holds its budget), then drops the hold: alone among the team's admissions,
   * so that none reads the stores before the bill and this process's holds after it. Returns the credits billed.
   * The hold is dropped even when `write` throws.
   */
  settle(cost: number, write?: (credits: number) => Promise<void>): Promise<number>;
  /** Drops the hold without a bill (the job failed before it cost anything). Idempotent; settle() calls it. */
  release(): void;
}

/** The reservation of a job with no credit limit (authentication off, unlimited team): nothing held. */
export const UNLIMITED: Reservation = {
  credits: Infinity,
  settle: async (cost, write) => {
    await write?.(cost);
    return cost;
  },
  release: () => undefined,
};

export class CreditReservations {
  private readonly held = new Map<string, number>();
  private readonly queues = new Map<string, Promise<unknown>>();

  /** Runs `fn` alone among this team's admissions and settlements (in this process), in the order asked. */
  exclusive<T>(teamId: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(teamId) ?? Promise.resolve()).then(fn);
    const tail = run.then(() => undefined, () => undefined);
    this.queues.set(teamId, tail);
    void tail.then(() => {
      if (this.queues.get(teamId) === tail) this.queues.delete(teamId);
    });
    return run;
  }

  /** Credits this process's running jobs of the team hold. */
  heldBy(teamId: string): number {
    return this.held.get(teamId) ?? 0;
  }

  /** Every team's held credits (0 when no job runs: nothing leaked). */
  total(): number {
    let sum = 0;
    for (const n of this.held.values()) sum += n;
    return sum;
  }

  /**
   * A job of the team granted `credits`, holding `hold` of them (call inside exclusive(), after reading the stores).
   * `left`: what the team has left now, this process's holds deducted (read again when the job is billed).
   */
  hold(teamId: string, credits: number, hold: number, left: () => Promise<number>): Reservation {
    this.held.set(teamId, this.heldBy(teamId) + hold);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const rest = this.heldBy(teamId) - hold;
      if (rest > 0) this.held.set(teamId, rest);
      else this.held.delete(teamId);
    };
    return {
      credits,
      settle: (cost, write) => this.exclusive(teamId, async () => {
        try {
          if (!write) return 0;
          const billed = Math.max(0, Math.min(cost, credits, released ? 0 : hold + (await left())));
          await write(billed);
          return billed;
        } finally {
          release();
        }
      }),
      release,
    };
  }
}

/** `pdf` with its pages capped at what `credits` pay for (1 credit a page); PDFs returned as base64 cost 1 credit. */
export function withCreditCap<T extends { pdf?: { parse: boolean; maxPages?: number; creditPages?: number } }>(options: T, credits: number): T {
  if (credits === Infinity || options.pdf?.parse === false) return options;
  return { ...options, pdf: { ...(options.pdf ?? { parse: true }), creditPages: credits } };
}

/**
 * A ledger (a use case's own, as map and search write it) whose rows are billed through the job's reservation;
 * `billed` hears what each row was billed.
 */
export function billedLedger(held: Reservation, ledger: Pick<AuthStore, "recordUsage"> | undefined, billed?: (credits: number) => void): Pick<AuthStore, "recordUsage"> | undefined {
  if (!ledger || held === UNLIMITED) return ledger;
  return {
    async recordUsage(rows) {
      for (const row of rows) {
        const credits = await held.settle(row.credits, (n) => ledger.recordUsage([{ ...row, credits: n }]));
        billed?.(credits);
      }
    },
  };
}
