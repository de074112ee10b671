import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EmbeddedAuthStore } from "./embedded-auth-store.ts";
import type { KeyRow } from "./auth-store.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-auth-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (keyId: string, version = 0, revokedAt = 0): KeyRow => ({ keyId, teamId: "t", hash: "h", salt: "s", ratePerMin: 0, createdAt: 1, expiresAt: 0, revokedAt, version });

describe("EmbeddedAuthStore", () => {
  it("applies every write once, concurrent ones included, and sees what another process appended", async () => {
    const a = await EmbeddedAuthStore.open(dir);
    const b = await EmbeddedAuthStore.open(dir);
    await Promise.all([
      a.saveKey(key("k1")), a.touchKeys([{ keyId: "k1", at: 5 }]), a.saveKey(key("k2")), a.recordUsage([{ teamId: "t", jobId: "j", credits: 3, at: 1 }, { teamId: "t", jobId: "x", credits: 5, tokens: 70, at: 2 }]),
      ...Array.from({ length: 20 }, (_, i) => a.touchKeys([{ keyId: `k${i + 10}`, at: i }])),
    ]);
    // a write after concurrent ones is still applied (each byte of the file read once)
    await a.saveKey(key("k1", 1, 99));
    expect((await a.keysById("k1")).map((k) => k.revokedAt)).toEqual([99]);
    // b never wrote: it reads what a appended
    expect((await b.keysById("k1")).map((k) => k.revokedAt)).toEqual([99]);
    expect((await b.listKeys()).map((k) => k.keyId).sort()).toEqual(["k1", "k2"]);
    // a row without tokens (as earlier releases wrote them) reads as 0 tokens
    expect(await b.usage("t")).toEqual(new Map([["j", { credits: 3, tokens: 0, at: 1 }], ["x", { credits: 5, tokens: 70, at: 2 }]]));
    expect((await b.lastUsed()).get("k1")).toBe(5);
    await a.close();
    await b.close();
  });

  it("a team name holding U+2028, U+2029, CR or a lone surrogate reads back whole in another process's store", async () => {
    // this file is split at the byte 0x0A of its decoded text (never by a line splitter): a guard, not a regression
    const d = mkdtempSync(join(tmpdir(), "trawl-auth-chars-"));
    try {
      const name = "a\u2028b\u2029c\rd \ud800";
      const a = await EmbeddedAuthStore.open(d);
      await a.saveTeam({ teamId: "t1", name, credits: -1, createdAt: 1, version: 0 });
      await a.saveKey(key("k9"));
      const b = await EmbeddedAuthStore.open(d);
      expect((await b.listTeams()).map((t) => t.name)).toEqual([name]);
      expect((await b.listKeys()).map((k) => k.keyId)).toEqual(["k9"]);
      await a.close();
      await b.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
