// A team's limit of jobs running at once: its own setting (`trawl keys create --concurrency`, `trawl teams
// concurrency`), else TEAM_MAX_CONCURRENCY; the anonymous team of authentication off has the default. Read from the
// auth store at most once per `ttlMs`, so a changed limit applies within that bound.
import type { AuthStore, TeamRow } from "../store/auth-store.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";

export class TeamLimits {
  private readonly auth: AuthStore;
  private readonly fallback: number;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private cached: { at: number; teams: Promise<TeamRow[]> } | null = null;

  constructor(auth: AuthStore, fallback: number, ttlMs: number, now: () => number) {
    this.auth = auth;
    this.fallback = fallback;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  async of(teamId: string): Promise<number> {
    if (teamId === TEAM_BYPASS) return this.fallback;
    if (!this.cached || this.now() - this.cached.at > this.ttlMs) {
      const teams = this.auth.listTeams();
      this.cached = { at: this.now(), teams };
      teams.catch(() => {
        if (this.cached?.teams === teams) this.cached = null; // not a newer read started since
      });
    }
    const team = (await this.cached.teams).find((t) => t.teamId === teamId);
    return team?.concurrency ?? this.fallback;
  }
}
