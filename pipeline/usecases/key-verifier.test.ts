// KeyVerifier with its gate (the failed-attempt limit of a client address) and its hash queue, on a real embedded
// auth store; the hash is the real one (scrypt), wrapped to count its calls, or one held until released.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedAuthStore } from "../store/embedded-auth-store.ts";
import { createKey, hashKey } from "./api-keys.ts";
import { FailureLimiter } from "./auth-failures.ts";
import { KeyVerifier } from "./key-verifier.ts";

const dir = mkdtempSync(join(tmpdir(), "trawl-key-verifier-"));
let store: EmbeddedAuthStore;
let key: string;
const now = () => 1_000_000;
beforeAll(async () => {
  store = await EmbeddedAuthStore.open(dir);
  key = (await createKey(store, { teamName: "v" }, now())).key;
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function counted() {
  const hash = Object.assign((k: string, salt: string) => (hash.calls++, hashKey(k, salt)), { calls: 0 });
  return hash;
}
const wrong = (i: number) => key.slice(0, 11) + i.toString(16).padStart(32, "0");

describe("KeyVerifier", () => {
  it("asks the gate before each hash: over the limit no key is hashed, and a burst gets no more hashes than the limit", async () => {
    const hash = counted();
    const verifier = new KeyVerifier({ store, cacheTtlMs: 5000, now, hash });
    const failures = new FailureLimiter(3, 60_000, now);
    const gate = failures.gate("10.0.0.1");
    expect(await verifier.verify(key, gate)).toMatchObject({ ok: true });
    const burst = await Promise.all(Array.from({ length: 8 }, (_, i) => verifier.verify(wrong(i), gate)));
    expect(hash.calls).toBe(1 + 3);
    expect(burst.filter((v) => !v.ok && v.reason === "refused")).toHaveLength(3);
    expect(burst.filter((v) => !v.ok && v.reason === "limited" && v.retryAfterS === 60)).toHaveLength(5);
    // a key verified before needs no hash: it passes the closed gate; another address is not limited
    expect(await verifier.verify(key, gate)).toMatchObject({ ok: true });
    expect(await verifier.verify(wrong(99), failures.gate("10.0.0.2"))).toMatchObject({ ok: false, reason: "refused" });
    // a credential that is not a bearer key is a failure too
    const other = failures.gate("10.0.0.3");
    for (let i = 0; i < 3; i++) expect(await verifier.verify(null, other)).toMatchObject({ ok: false, reason: "refused" });
    expect(await verifier.verify(null, other)).toMatchObject({ ok: false, reason: "limited" });
    expect(hash.calls).toBe(5);
  });

  it("refuses a key refused within the last second again without a hash, counting each as a failure", async () => {
    const hash = counted();
    const verifier = new KeyVerifier({ store, cacheTtlMs: 5000, now, hash });
    let failed = 0;
    const gate = { wait: () => 0, failed: () => void failed++ };
    for (let i = 0; i < 3; i++) expect(await verifier.verify(wrong(7), gate)).toMatchObject({ ok: false, reason: "refused" });
    expect({ hashes: hash.calls, failed }).toEqual({ hashes: 1, failed: 3 });
  });

  it("answers busy at once when 64 keys per slot already wait for a hash", async () => {
    const held: (() => void)[] = [];
    // held until released; what it returns matches no row (the queue is under test, not scrypt)
    const hash = () => new Promise<void>((go) => held.push(go)).then(() => "00");
    const verifier = new KeyVerifier({ store, cacheTtlMs: 5000, now, hash, hashConcurrency: 2 });
    const pending = Array.from({ length: 2 + 128 }, (_, i) => verifier.verify(wrong(1000 + i)));
    await new Promise((r) => setTimeout(r, 50));
    expect(held).toHaveLength(2);
    expect(await verifier.verify(wrong(5000))).toEqual({ ok: false, reason: "busy", retryAfterS: 1 });
    // the queue drains in order, one hash per slot
    for (let n = 0; n < 130; n++) {
      while (held.length === 0) await new Promise((r) => setTimeout(r, 1));
      held.shift()?.();
    }
    expect((await Promise.all(pending)).every((v) => !v.ok && v.reason === "refused")).toBe(true);
  });
});

describe("FailureLimiter", () => {
  it("counts failures per address from the first one, answers the seconds left, and forgets after the window", () => {
    let t = 0;
    const f = new FailureLimiter(2, 10_000, () => t);
    f.failed("a");
    t = 1000;
    f.failed("a");
    expect([f.wait("a"), f.wait("b")]).toEqual([9, 0]);
    t = 9_500;
    expect(f.wait("a")).toBe(1);
    t = 10_000;
    expect(f.wait("a")).toBe(0);
    f.failed("a");
    expect(f.wait("a")).toBe(0);
    const none = new FailureLimiter(0, 10_000, () => t);
    for (let i = 0; i < 100; i++) none.failed("a");
    expect(none.wait("a")).toBe(0);
  });
});
