// Verifying bearer keys so that a wrong key costs the same whether or not its id exists, and valid keys never wait
// behind wrong ones (issue 31).
//
// A key is `fc-<keyId><secret>` with 160 random bits; the store keeps scrypt(key, salt) (~50 ms of a core, run on
// libuv's thread pool). Before, a key whose id was unknown cost nothing while a known id with a wrong secret cost a
// scrypt (2.6 against 61.6 ms: which ids exist showed), and 25 wrong keys a second filled the 4-thread pool that file
// reads and DNS lookups share with a FIFO queue of hashes: valid requests waited seconds behind them. Now:
// - Same work either way: every well-formed key is hashed once per stored row of its id, and once against a dummy
//   row when the id is unknown (revoked and expired rows are hashed too, and refused after the comparison).
// - Valid keys are hashed once per process (while used at least every 10 minutes): a verified key is kept under the
//   SHA-256 of the whole token (no plain key in the heap) and re-checked every `cacheTtlMs` by reading its row again (revoked, expired, or replaced by
//   another hash: refused), which costs a store read and no hash. So revocation still takes effect within
//   AUTH_CACHE_TTL_MS, and a flood of wrong keys cannot delay a key that was verified before it.
// - Hashes run at most `hashConcurrency` at once (default 1): the pool keeps its other threads for files and DNS and
//   hashing takes at most one core; others wait in this queue, and past `64 × hashConcurrency` waiting a request is
//   refused at once (`busy`). Cheaper hashing was not chosen: it would change the stored rows of every existing key.
// - Before each hash, the caller's `AttemptGate` (auth-failures.ts: the failed-attempt limit of the client address
//   api/auth.ts names) may refuse it: a limited address causes no hash work, and one refused key is counted as a failure before the next hash
//   starts, so an address gets at most its limit (+ hashConcurrency - 1) hashes per window.
// A key refused within the last second is refused again without a hash (still counted as a failure).
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthStore, KeyRow } from "../store/auth-store.ts";
import { hashKey, KEY_FORMAT, type Caller } from "./api-keys.ts";

const KEY_ID_CHARS = 8;
const MAX_ENTRIES = 10_000;
/** A verified key unused this long is dropped (its next use hashes it again). */
const IDLE_MS = 10 * 60_000;
const REFUSED_MS = 1000;
const WAITING_PER_SLOT = 64;

/** Who is presenting a key: may it be hashed now, and note a refusal. */
export interface AttemptGate {
  /** Seconds before a key of this client may be hashed (0: now). */
  wait(): number;
  failed(): void;
}

export type Verification =
  | { ok: true; caller: Caller }
  | { ok: false; reason: "refused" }
  /** the client is over its failed-attempt limit, or too many keys wait for a hash: retry after `retryAfterS` */
  | { ok: false; reason: "limited" | "busy"; retryAfterS: number };

interface Verified {
  caller: Caller;
  hash: string;
  salt: string;
  expiresAt: number;
  checkedAt: number;
  usedAt: number;
  recheck?: Promise<boolean>;
}

const OPEN: AttemptGate = { wait: () => 0, failed: () => undefined };
const digest = (token: string) => createHash("sha256").update(token).digest("base64");
const active = (row: KeyRow, now: number) => row.revokedAt === 0 && (row.expiresAt === 0 || row.expiresAt > now);

export interface KeyVerifierOptions {
  store: AuthStore;
  /** How long a verified key is trusted before its row is read again. */
  cacheTtlMs: number;
  now: () => number;
  /** Keys hashed at once. */
  hashConcurrency?: number;
  /** The stored hash of a key (scrypt); a test may count its calls. */
  hash?: (key: string, salt: string) => Promise<string>;
}

export class KeyVerifier {
  private readonly verified = new Map<string, Verified>();
  private readonly refused = new Map<string, number>();
  private readonly uses = new Map<string, number>();
  private readonly store: AuthStore;
  private readonly cacheTtlMs: number;
  private readonly now: () => number;
  private readonly hash: (key: string, salt: string) => Promise<string>;
  private readonly slots: number;
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** Compared with when a key's id is unknown: the same work as a known id with a wrong secret. */
  private readonly dummy = { salt: randomBytes(16).toString("hex"), hash: randomBytes(32).toString("hex") };

  constructor(opts: KeyVerifierOptions) {
    this.store = opts.store;
    this.cacheTtlMs = opts.cacheTtlMs;
    this.now = opts.now;
    this.hash = opts.hash ?? hashKey;
    this.slots = Math.max(1, opts.hashConcurrency ?? 1);
  }

  /** Verifies a bearer token (`null`: a credential that is not a bearer key, refused without a hash). */
  async verify(token: string | null, gate: AttemptGate = OPEN): Promise<Verification> {
    const id = token === null ? null : digest(token);
    const known = id === null ? undefined : await this.recall(id);
    if (known) return { ok: true, caller: this.used(known, this.now()) };
    const wait = gate.wait();
    if (wait > 0) return { ok: false, reason: "limited", retryAfterS: wait };
    if (token === null || id === null || stillRefused(this.refused, id, this.now()) || !KEY_FORMAT.test(token)) return this.refuse(id, gate);
    if (this.waiting.length >= WAITING_PER_SLOT * this.slots) return { ok: false, reason: "busy", retryAfterS: 1 };
    await this.slot();
    try {
      // checked again: failures counted while this request waited may have reached the limit
      const again = gate.wait();
      if (again > 0) return { ok: false, reason: "limited", retryAfterS: again };
      const row = await this.match(token);
      if (!row) return this.refuse(id, gate);
      const now = this.now();
      const entry: Verified = { caller: { teamId: row.teamId, keyId: row.keyId, ratePerMin: row.ratePerMin }, hash: row.hash, salt: row.salt, expiresAt: row.expiresAt, checkedAt: now, usedAt: now };
      if (this.verified.size >= MAX_ENTRIES) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(id, entry);
      return { ok: true, caller: this.used(entry, now) };
    } finally {
      this.release();
    }
  }

  /** The row a well-formed key belongs to, if active: one hash per row of its id, or one against the dummy row. */
  private async match(token: string): Promise<KeyRow | null> {
    const rows = await this.store.keysById(token.slice(3, 3 + KEY_ID_CHARS));
    const now = this.now();
    let found: KeyRow | null = null;
    for (const row of rows.length > 0 ? rows : [null]) {
      const given = Buffer.from(await this.hash(token, row?.salt ?? this.dummy.salt), "hex");
      const stored = Buffer.from(row?.hash ?? this.dummy.hash, "hex");
      if (row && given.length === stored.length && timingSafeEqual(given, stored) && active(row, now)) found = row;
    }
    return found;
  }

  /** A key verified before, still active (its row read again every `cacheTtlMs`); undefined when not known so. */
  private async recall(id: string): Promise<Verified | undefined> {
    const entry = this.verified.get(id);
    if (!entry) return undefined;
    const now = this.now();
    if (now - entry.usedAt >= IDLE_MS || (entry.expiresAt !== 0 && entry.expiresAt <= now)) {
      this.verified.delete(id);
      return undefined;
    }
    if (now - entry.checkedAt >= this.cacheTtlMs) {
      entry.recheck ??= this.recheck(entry, now).finally(() => (entry.recheck = undefined));
      if (!(await entry.recheck)) {
        if (this.verified.get(id) === entry) this.verified.delete(id);
        return undefined;
      }
    }
    return entry;
  }

  private async recheck(entry: Verified, now: number): Promise<boolean> {
    const row = (await this.store.keysById(entry.caller.keyId)).find((r) => r.hash === entry.hash && r.salt === entry.salt);
    if (!row || !active(row, now)) return false;
    entry.caller = { teamId: row.teamId, keyId: row.keyId, ratePerMin: row.ratePerMin };
    entry.expiresAt = row.expiresAt;
    entry.checkedAt = now;
    return true;
  }

  private refuse(id: string | null, gate: AttemptGate): Verification {
    gate.failed();
    if (id !== null) {
      if (this.refused.size >= MAX_ENTRIES) this.refused.clear();
      this.refused.set(id, this.now() + REFUSED_MS);
    }
    return { ok: false, reason: "refused" };
  }

  private slot(): Promise<void> {
    if (this.running < this.slots) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  private used(entry: Verified, now: number): Caller {
    entry.usedAt = now;
    const caller = entry.caller;
    if (now - (this.uses.get(caller.keyId) ?? 0) >= 60_000) {
      this.uses.set(caller.keyId, now);
      this.store.touchKeys([{ keyId: caller.keyId, at: now }]).catch(() => this.uses.delete(caller.keyId));
    }
    return caller;
  }
}

function stillRefused(refused: Map<string, number>, id: string, now: number): boolean {
  const until = refused.get(id);
  if (until === undefined) return false;
  if (until > now) return true;
  refused.delete(id);
  return false;
}
