// Teams and API keys: creation (the plain key is shown once), revocation, and the verification every request makes.
// A key is `fc-<keyId><secret>` (hex); the store keeps scrypt(key, salt) only. Checking a key: key-verifier.ts.
import { randomBytes, randomUUID, scrypt as scryptCb } from "node:crypto";
import { promisify } from "node:util";
import type { AuthStore, KeyRow, TeamRow } from "../store/auth-store.ts";
import { invalidField } from "../runtime/errors.ts";

const scrypt = promisify(scryptCb) as (key: string, salt: string, len: number) => Promise<Buffer>;
const KEY_ID_CHARS = 8;
const HASH_BYTES = 32;

export const hashKey = async (key: string, salt: string) => (await scrypt(key, salt, HASH_BYTES)).toString("hex");

/** `fc-` followed by 40 hex characters: the first 8 are the public id used for lookup. */
export const KEY_FORMAT = /^fc-[0-9a-f]{40}$/;

export interface NewKey {
  teamName: string;
  /** Credits of a team created for this key (-1: unlimited); an existing team keeps its balance. */
  credits?: number;
  /** The team's limit of jobs at once (0: none); an existing team keeps its limit when absent. */
  concurrency?: number;
  ratePerMin?: number;
  expiresAt?: number;
}

/**
 * The team with that name, created when missing (with `credits`, -1 = unlimited, and `concurrency`); the settings
 * given change an existing team.
 */
export async function ensureTeam(store: AuthStore, name: string, credits: number | undefined, now: number, concurrency?: number): Promise<TeamRow> {
  if (!/^[\w.@-]{1,64}$/.test(name)) throw invalidField(["team"], "A team name has 1 to 64 letters, digits, '.', '_', '@' or '-'");
  const existing = (await store.listTeams()).find((t) => t.name === name);
  if (existing && credits === undefined && concurrency === undefined) return existing;
  const limit = concurrency !== undefined ? { concurrency } : {};
  const team: TeamRow = existing
    ? { ...existing, ...(credits !== undefined ? { credits } : {}), ...limit, version: existing.version + 1 }
    : { teamId: randomUUID(), name, credits: credits ?? -1, ...limit, createdAt: now, version: 0 };
  await store.saveTeam(team);
  return team;
}

/** Creates a key for a team (creating the team when missing). Returns the plain key: it is never stored. */
export async function createKey(store: AuthStore, req: NewKey, now: number): Promise<{ key: string; row: KeyRow; team: TeamRow }> {
  const team = await ensureTeam(store, req.teamName, req.credits, now, req.concurrency);
  const key = `fc-${randomBytes(20).toString("hex")}`;
  const salt = randomBytes(16).toString("hex");
  const row: KeyRow = {
    keyId: key.slice(3, 3 + KEY_ID_CHARS), teamId: team.teamId, hash: await hashKey(key, salt), salt,
    ratePerMin: req.ratePerMin ?? 0, createdAt: now, expiresAt: req.expiresAt ?? 0, revokedAt: 0, version: 0,
  };
  await store.saveKey(row);
  return { key, row, team };
}

/** Revokes every key with this id; returns how many were active. */
export async function revokeKey(store: AuthStore, keyId: string, now: number): Promise<number> {
  const active = (await store.keysById(keyId)).filter((k) => k.revokedAt === 0);
  for (const k of active) await store.saveKey({ ...k, revokedAt: now, version: k.version + 1 });
  return active.length;
}

export interface Caller {
  teamId: string;
  keyId: string;
  ratePerMin: number;
}
