// The work a key check does, counted where it happens: every scrypt call of the process goes through a counting
// wrapper of node:crypto's real scrypt (issue 31: a wrong key with an unknown id cost nothing, one with a known id a
// scrypt, so the answer's time told which ids exist; a valid key was hashed again every AUTH_CACHE_TTL_MS; 25 wrong
// keys at once ran 25 hashes on the thread pool that file reads share). A real embedded auth store, real keys.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { EmbeddedAuthStore } from "../store/embedded-auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { createKey, revokeKey } from "./api-keys.ts";
import { TeamAccess } from "./team-access.ts";

const work = vi.hoisted(() => ({ salts: [] as string[], running: 0, most: 0 }));
vi.mock("node:crypto", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:crypto")>();
  const scrypt = (key: string, salt: string, len: number, done: (err: Error | null, buf: Buffer) => void) => {
    work.salts.push(salt);
    work.most = Math.max(work.most, ++work.running);
    real.scrypt(key, salt, len, (err, buf) => {
      work.running--;
      done(err, buf);
    });
  };
  return { ...real, scrypt, default: { ...real, scrypt } };
});

const dir = mkdtempSync(join(tmpdir(), "trawl-wrong-keys-"));
let store: EmbeddedAuthStore;
let now = 1_000_000;
let access: TeamAccess;
const TTL = 5000;
// the verifier reads no crawl: a crawl store is not part of a key check
const noCrawls = {} as CrawlStore;

beforeAll(async () => {
  store = await EmbeddedAuthStore.open(dir);
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  access = new TeamAccess({ store: noCrawls, auth: store, cacheTtlMs: TTL, now: () => now });
  work.salts.length = 0;
  work.most = 0;
});

const wrongSecret = (key: string) => key.slice(0, 11) + (key[11] === "0" ? "1" : "0") + key.slice(12);
const refused = (v: unknown) => expect(v).toMatchObject({ ok: false, reason: "refused" });

describe("a wrong key", () => {
  it("costs one scrypt whether its id is unknown, known with a wrong secret, revoked or expired", async () => {
    const { key, row } = await createKey(store, { teamName: "work" }, now);
    const revoked = (await createKey(store, { teamName: "work" }, now)).key;
    await revokeKey(store, revoked.slice(3, 11), now);
    const expired = (await createKey(store, { teamName: "work", expiresAt: now - 1 }, now)).key;
    work.salts.length = 0;
    const cases = { unknownId: "fc-0123456789abcdef0123456789abcdef01234567", knownIdWrongSecret: wrongSecret(key), revoked, expired };
    const hashes: Record<string, number> = {};
    const results: unknown[] = [];
    for (const [name, token] of Object.entries(cases)) {
      const before = work.salts.length;
      results.push(await access.verifier.verify(token));
      hashes[name] = work.salts.length - before;
    }
    expect(hashes).toEqual({ unknownId: 1, knownIdWrongSecret: 1, revoked: 1, expired: 1 });
    for (const r of results) refused(r);
    // the unknown id was hashed with a salt of the same form as a stored one (the dummy row), not a stored salt
    expect(work.salts[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(work.salts[0]).not.toBe(row.salt);
    expect(work.salts[1]).toBe(row.salt);
    // a token that is not a key at all (its form is public) is refused without a hash
    refused(await access.verifier.verify("fc-not-a-key"));
    expect(work.salts).toHaveLength(4);
  });

  it("waits for the one hash in flight: 6 wrong keys at once never run two scrypts together", async () => {
    const { key } = await createKey(store, { teamName: "work" }, now);
    work.salts.length = 0;
    const keys = Array.from({ length: 6 }, (_, i) => key.slice(0, 11) + String(i).repeat(32));
    const results = await Promise.all(keys.map((k) => access.verifier.verify(k)));
    expect(work.salts).toHaveLength(6);
    expect(work.most).toBe(1);
    for (const r of results) refused(r);
  });
});

describe("a valid key", () => {
  it("is hashed once per process: after AUTH_CACHE_TTL_MS its row is read again, not hashed, and a revocation stops it", async () => {
    const { key, row } = await createKey(store, { teamName: "work", ratePerMin: 7 }, now);
    work.salts.length = 0;
    const results = [await access.verifier.verify(key)];
    for (let i = 0; i < 3; i++) {
      now += TTL + 1;
      results.push(await access.verifier.verify(key));
    }
    expect(work.salts).toHaveLength(1);
    expect(results[0]).toMatchObject({ ok: true, caller: { keyId: row.keyId, teamId: row.teamId, ratePerMin: 7 } });
    for (const r of results) expect(r).toMatchObject({ ok: true });
    await revokeKey(store, row.keyId, now);
    expect(await access.verifier.verify(key)).toMatchObject({ ok: true }); // trusted within the TTL
    now += TTL;
    refused(await access.verifier.verify(key));
  });

  it("is refused once it expires, though verified before", async () => {
    const { key } = await createKey(store, { teamName: "work", expiresAt: now + 1000 }, now);
    const before = await access.verifier.verify(key);
    now += 1000;
    refused(await access.verifier.verify(key));
    expect(before).toMatchObject({ ok: true });
  });
});
