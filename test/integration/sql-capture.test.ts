// The SQL capture (TRAWL_SQL_CAPTURE, pipeline/store/sql-capture.ts) on the real ClickHouse client and server: each
// distinct statement once, the database as {db}, no string value (an API key's hash and salt) in the file, a query's
// columns as the server answered them; nothing published while no one captures.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseAuthStore } from "../../pipeline/store/clickhouse-auth-store.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { migrate } from "../../pipeline/store/migrations.ts";
import { captureStatements, type CapturedStatement } from "../../pipeline/store/sql-capture.ts";
import { raw, sql } from "../../pipeline/store/sql.ts";

const config = loadConfig(process.env);
const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: `trawl_capture_${Date.now().toString(36)}` });
const dir = mkdtempSync(join(tmpdir(), "trawl-capture-"));
const key = { keyId: "kid-public", teamId: "team-secretive", hash: "a1b2c3d4e5f60718293a4b5c6d7e8f90", salt: "5a1t5a1t5a1t", ratePerMin: 60, createdAt: 1_700_000_000_000, expiresAt: 0, revokedAt: 0, version: 1 };

beforeAll(async () => {
  await migrate(ch);
});
afterAll(async () => {
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
  rmSync(dir, { recursive: true, force: true });
});

describe("SQL capture", () => {
  it("writes each distinct statement once, with {db}, example values and the answered columns, and no secret", async () => {
    const file = join(dir, "capture.jsonl");
    const stop = captureStatements(file);
    // in the test workers, TRAWL_SQL_CAPTURE may subscribe a capture of its own too: this one is read alone
    const auth = new ClickHouseAuthStore(ch);
    try {
      await auth.saveKey(key);
      await auth.saveKey({ ...key, keyId: "kid-other", version: 2 });
      expect((await auth.keysById(key.keyId)).map((k) => k.hash)).toEqual([key.hash]);
      expect(await auth.keysById("kid-nothing")).toEqual([]);
    } finally {
      stop();
    }
    await auth.keysById(key.keyId); // after the capture stopped: not written
    const text = readFileSync(file, "utf8");
    for (const secret of [key.hash, key.salt, key.teamId, ch.database]) expect(text).not.toContain(secret);
    const lines = text.trim().split("\n").map((l) => JSON.parse(l) as CapturedStatement);
    const inserts = lines.filter((l) => l.kind === "insert");
    expect(inserts).toHaveLength(1); // two calls, one statement
    expect(inserts[0]?.shape).toMatch(/^INSERT INTO \{db\}\.api_keys \(key_id, .*\) VALUES \(\{String\}, \{String\}, \{String\}, \{String\}, \{Number\}, /);
    expect(inserts[0]?.sql).toBe("INSERT INTO {db}.api_keys (key_id, team_id, hash, salt, rate_per_min, created_at, expires_at, revoked_at, version) VALUES ('x', 'x', 'x', 'x', 60, 1700000000000, 0, 0, 1)");
    const reads = lines.filter((l) => l.kind === "query");
    // one shape, written with the columns of the read that answered a row and once without (the empty answer)
    expect(new Set(reads.map((r) => r.shape))).toEqual(new Set(["SELECT key_id, team_id, hash, salt, rate_per_min, created_at, expires_at, revoked_at, version FROM {db}.api_keys WHERE key_id = {String}"]));
    expect(reads.map((r) => r.columns)).toEqual([
      { key_id: "string", team_id: "string", hash: "string", salt: "string", rate_per_min: "number", created_at: "number", expires_at: "number", revoked_at: "number", version: "number" },
      undefined,
    ]);
  });

  it("captures a read of every replica (the sink's key list) as a query", async () => {
    const file = join(dir, "every.jsonl");
    const stop = captureStatements(file);
    try {
      await ch.queryEvery(sql`SELECT count() AS n FROM ${raw(ch.table("api_keys"))} WHERE team_id = ${"t"}`);
    } finally {
      stop();
    }
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as CapturedStatement);
    expect(lines.map((l) => [l.kind, l.shape, l.columns])).toEqual([["query", "SELECT count() AS n FROM {db}.api_keys WHERE team_id = {String}", { n: "number" }]]);
  });
});
