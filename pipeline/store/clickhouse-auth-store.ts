// ClickHouse adapter of the AuthStore port (tables teams, api_keys, api_key_uses, credit_usage; see migrations.ts).
// Reads take the latest version in JS (no FINAL): these tables hold a few rows per team.
import type { ClickHouseClient } from "./clickhouse.ts";
import { latest, type AuthStore, type KeyRow, type TeamRow, type UsageRow } from "./auth-store.ts";
import type { JobUsage } from "./crawl-store.ts";
import { raw, sql } from "./sql.ts";

const n = (v: unknown): number => Number(v);

export class ClickHouseAuthStore implements AuthStore {
  private readonly ch: ClickHouseClient;
  constructor(ch: ClickHouseClient) {
    this.ch = ch;
  }

  private t(name: string) {
    return raw(this.ch.table(name));
  }

  async saveTeam(team: TeamRow): Promise<void> {
    // the concurrency limit has its own table (added later; teams keeps its first columns): written first, so a
    // team version never shows without its limit
    if (team.concurrency !== undefined) await this.ch.insert("team_limits", ["team_id", "concurrency", "version"], [[team.teamId, team.concurrency, team.version]]);
    await this.ch.insert("teams", ["team_id", "name", "credits", "created_at", "version"], [[team.teamId, team.name, team.credits, team.createdAt, team.version]]);
  }

  async listTeams(): Promise<TeamRow[]> {
    const [rows, limits] = await Promise.all([
      this.ch.query<Record<string, unknown>>(sql`SELECT team_id, name, credits, created_at, version FROM ${this.t("teams")}`),
      this.ch.query<Record<string, unknown>>(sql`SELECT team_id, argMax(concurrency, version) AS concurrency FROM ${this.t("team_limits")} GROUP BY team_id`),
    ]);
    const limit = new Map(limits.map((r) => [String(r.team_id), n(r.concurrency)]));
    return latest(rows.map((r) => {
      const c = limit.get(String(r.team_id));
      return { teamId: String(r.team_id), name: String(r.name), credits: n(r.credits), ...(c !== undefined ? { concurrency: c } : {}), createdAt: n(r.created_at), version: n(r.version) };
    }), (t) => t.teamId);
  }

  async saveKey(k: KeyRow): Promise<void> {
    await this.ch.insert("api_keys", ["key_id", "team_id", "hash", "salt", "rate_per_min", "created_at", "expires_at", "revoked_at", "version"],
      [[k.keyId, k.teamId, k.hash, k.salt, k.ratePerMin, k.createdAt, k.expiresAt, k.revokedAt, k.version]]);
  }

  private async keys(where: ReturnType<typeof sql>): Promise<KeyRow[]> {
    const rows = await this.ch.query<Record<string, unknown>>(
      sql`SELECT key_id, team_id, hash, salt, rate_per_min, created_at, expires_at, revoked_at, version FROM ${this.t("api_keys")} WHERE ${where}`,
    );
    return latest(rows.map((r) => ({
      keyId: String(r.key_id), teamId: String(r.team_id), hash: String(r.hash), salt: String(r.salt), ratePerMin: n(r.rate_per_min),
      createdAt: n(r.created_at), expiresAt: n(r.expires_at), revokedAt: n(r.revoked_at), version: n(r.version),
    })), (k) => k.keyId + k.hash);
  }

  keysById(keyId: string): Promise<KeyRow[]> {
    return this.keys(sql`key_id = ${keyId}`);
  }

  listKeys(teamId?: string): Promise<KeyRow[]> {
    return this.keys(teamId === undefined ? raw("1") : sql`team_id = ${teamId}`);
  }

  async touchKeys(uses: { keyId: string; at: number }[]): Promise<void> {
    if (uses.length) await this.ch.insert("api_key_uses", ["key_id", "at"], uses.map((u) => [u.keyId, u.at]));
  }

  async lastUsed(): Promise<Map<string, number>> {
    const rows = await this.ch.query<{ key_id: string; at: unknown }>(sql`SELECT key_id, max(at) AS at FROM ${this.t("api_key_uses")} GROUP BY key_id`);
    return new Map(rows.map((r) => [r.key_id, n(r.at)]));
  }

  async recordUsage(rows: UsageRow[]): Promise<void> {
    if (rows.length) await this.ch.insert("credit_usage", ["team_id", "job_id", "credits", "tokens", "at"], rows.map((r) => [r.teamId, r.jobId, r.credits, r.tokens ?? 0, r.at]));
  }

  async usage(teamId: string): Promise<Map<string, JobUsage>> {
    const rows = await this.ch.query<{ job_id: string; credits: unknown; tokens: unknown; last: unknown }>(
      sql`SELECT job_id, argMax(credits, at) AS credits, argMax(tokens, at) AS tokens, max(at) AS last
          FROM ${this.t("credit_usage")} WHERE team_id = ${teamId} GROUP BY job_id`,
    );
    return new Map(rows.map((r) => [r.job_id, { credits: n(r.credits), tokens: n(r.tokens), at: n(r.last) }]));
  }
}
