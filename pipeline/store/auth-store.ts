// The AuthStore port: teams, API keys (stored only as a hash) and the credit ledger of jobs that are no longer in
// the crawl store. Adapters: ClickHouse (clickhouse-auth-store.ts) and embedded (embedded-auth-store.ts).
import type { JobUsage } from "./crawl-store.ts";

/** One version of a team: a name and a credit balance (-1: unlimited). */
export interface TeamRow {
  teamId: string;
  name: string;
  /** Credits the team may use in all; -1 = no limit. */
  credits: number;
  /** Jobs (crawls, batch scrapes) the team runs at once; absent: TEAM_MAX_CONCURRENCY; 0: no limit. */
  concurrency?: number;
  createdAt: number;
  version: number;
}

/** One version of an API key. The key itself is never stored: `fc-<keyId><secret>`, with scrypt(secret, salt). */
export interface KeyRow {
  /** The public lookup part of the key (its first characters after `fc-`). */
  keyId: string;
  teamId: string;
  /** hex scrypt hash of the whole key */
  hash: string;
  salt: string;
  /** Requests per minute per key; 0 = no limit. */
  ratePerMin: number;
  createdAt: number;
  /** 0 = never */
  expiresAt: number;
  /** 0 = active */
  revokedAt: number;
  version: number;
}

/** The credits of one job (a scrape, a map, or a crawl that left the crawl store): the latest row of a job wins. */
export interface UsageRow {
  teamId: string;
  jobId: string;
  credits: number;
  /** LLM tokens the job used (absent: none; rows written before tokens were counted have none) */
  tokens?: number;
  /** when the job is counted (its period in the historical usage) */
  at: number;
}

export interface AuthStore {
  saveTeam(team: TeamRow): Promise<void>;
  /** Latest version of every team. */
  listTeams(): Promise<TeamRow[]>;
  saveKey(key: KeyRow): Promise<void>;
  /** Latest version of every key with this id (ids are random; more than one is possible but rare). */
  keysById(keyId: string): Promise<KeyRow[]>;
  /** Latest version of every key, of one team or all. */
  listKeys(teamId?: string): Promise<KeyRow[]>;
  /** When each key was last used (written at most once a minute per key and process). */
  touchKeys(uses: { keyId: string; at: number }[]): Promise<void>;
  lastUsed(): Promise<Map<string, number>>;
  recordUsage(rows: UsageRow[]): Promise<void>;
  /** The ledger of a team: job id -> credits, tokens and time (latest row of each job). */
  usage(teamId: string): Promise<Map<string, JobUsage>>;
}

/** The latest version of each item of `rows`, by `id`. */
export function latest<T extends { version: number }>(rows: T[], id: (row: T) => string): T[] {
  const out = new Map<string, T>();
  for (const r of rows) {
    const prev = out.get(id(r));
    if (!prev || r.version >= prev.version) out.set(id(r), r);
  }
  return [...out.values()];
}
