// Trawl on a ClickHouse that takes HTTPS only through a CA of its own (CLICKHOUSE_CA_FILE), with a password: a CA and
// a server certificate made at test time, a private ClickHouse 18.16 serving https_port with them, Trawl in cluster
// mode on the shared Kafka as a child process. The password must appear in no output, error body or /metrics.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { ident, raw } from "../../pipeline/store/sql.ts";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, postJson, waitForEnd } from "./harness.ts";
import { freePort, startOwnClickHouse, type OwnClickHouse } from "./own-infra.ts";
import { makeTestCertificates, type TestCertificates } from "./test-certs.ts";

const bin = join(import.meta.dirname, "..", "..", "bin", "trawl.js");
const PASSWORD = `pw-${randomBytes(9).toString("hex")}`;
const WRONG = `wrong-${randomBytes(9).toString("hex")}`;
const kafkaBrokers = loadConfig(process.env).kafkaBrokers;

let dir = "";
let certs: TestCertificates;
let ch: OwnClickHouse | undefined;
let site: FixtureSite | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trawl-ch-tls-"));
  certs = await makeTestCertificates(dir);
  [ch, site] = await Promise.all([startOwnClickHouse({ tls: { cert: certs.cert, key: certs.key }, password: PASSWORD }), startFixtureSite()]);
}, 60_000);

afterAll(async () => {
  await site?.close();
  await ch?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every way a secret could be written: as is, URL-encoded, in a Basic Authorization header. */
function leaks(text: string, secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), Buffer.from(`default:${secret}`).toString("base64")];
  return forms.filter((f) => text.includes(f));
}

/** `trawl all` in cluster mode on the shared Kafka and the private ClickHouse; output collected. */
function trawl(env: Record<string, string>, args = ["all"]) {
  // a test tag as harness.ts makes them: what a crashed run leaves in the shared Kafka is removed later (leftovers.ts)
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const child = spawn(process.execPath, [bin, ...args], {
    env: {
      ...process.env,
      TRAWL_MODE: "cluster",
      KAFKA_BROKERS: kafkaBrokers,
      KAFKA_TOPIC_PREFIX: `${tag}.`,
      KAFKA_GROUP_PREFIX: `${tag}.`,
      KAFKA_PARTITIONS: "2",
      SCHEMA_REGISTRY_URL: "",
      CLICKHOUSE_URL: ch?.httpsUrl ?? "",
      CLICKHOUSE_DATABASE: `trawl_${tag}`,
      CLICKHOUSE_USER: "default",
      CLICKHOUSE_PASSWORD: PASSWORD,
      CLICKHOUSE_CA_FILE: certs.ca,
      ALLOW_PRIVATE_CRAWL_TARGETS: "true",
      RENDER: "never",
      CONVERT_WORKERS: "0",
      MAX_CPU: "1",
      MAX_RAM: "1",
      LOG_LEVEL: "debug",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (b: Buffer) => (output += b.toString()));
  child.stderr.on("data", (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => output, database: `trawl_${tag}` };
}

/** The exit status of a start that must fail, within `ms`. */
async function failedStart(run: ReturnType<typeof trawl>, ms = 45_000): Promise<number | null> {
  const timer = setTimeout(() => run.child.kill("SIGKILL"), ms);
  const code = await run.exited;
  clearTimeout(timer);
  return code;
}

async function until(what: string, ms: number, ok: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("ClickHouse over HTTPS (CLICKHOUSE_CA_FILE)", () => {
  it("crawls and serves documents through https with the CA file; the password is in no log, error body or /metrics", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const run = trawl({ PORT: String(port) });
    try {
      await until("the API", 90_000, async () => (await fetch(`${api}/ready`).catch(() => undefined))?.status === 200, run.output);
      const res = await postJson(`${api}/v2/crawl`, { url: `${site?.origin}/docs/`, limit: 8 });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const seen = await waitForEnd(api, res.body.id, 60_000);
      const end = seen.at(-1);
      expect(end.status).toBe("completed");
      const docs = (await allChunks(api, res.body.id)).flatMap((c) => c.body.data);
      expect(docs).toHaveLength(end.completed);
      expect(docs.length).toBeGreaterThanOrEqual(5);
      for (const d of docs) expect(d.metadata.sourceURL.startsWith(`${site?.origin}/docs/`) && d.markdown.length > 0).toBe(true);
      // the documents are in the private server, read back over HTTPS
      const db = new ClickHouseClient({ url: ch?.httpsUrl ?? "", user: "default", password: PASSWORD, database: "system", caFile: certs.ca });
      const rows = await db.query<{ n: number }>(raw(`SELECT count() AS n FROM ${ident(run.database)}.documents`));
      expect(Number(rows[0]?.n)).toBe(docs.length);

      const metrics = await (await fetch(`${api}/metrics`)).text();
      expect(metrics).toContain("# TYPE");
      expect(leaks(metrics, PASSWORD)).toEqual([]);

      // the server goes away: a read the API cannot answer is a 503, and the failure is logged
      await ch?.down();
      const missing = await getJson(`${api}/v2/crawl/${randomUUID()}`);
      expect(missing.status).toBe(503);
      expect(leaks(JSON.stringify(missing.body), PASSWORD)).toEqual([]);
      await until("the outage in the log", 10_000, async () => run.output().includes("ECONNREFUSED"), run.output);
      await ch?.up();
    } finally {
      run.child.kill("SIGTERM");
      await run.exited;
    }
    expect(run.output()).toContain("dependency unavailable");
    expect(leaks(run.output(), PASSWORD)).toEqual([]);
  }, 180_000);

  it("without CLICKHOUSE_CA_FILE (system CAs) the start stops with a certificate error naming the variables", async () => {
    const run = trawl({ CLICKHOUSE_CA_FILE: "" });
    expect(await failedStart(run)).not.toBe(0);
    const out = run.output();
    expect(out).toContain("STORE_TLS_UNTRUSTED");
    expect(out).toContain(`CLICKHOUSE_URL=${ch?.httpsUrl}`);
    expect(out).toMatch(/not trusted by the system's CAs \(CLICKHOUSE_CA_FILE is empty\)/);
    expect(out).not.toContain("waiting for ClickHouse");
    expect(leaks(out, PASSWORD)).toEqual([]);
  }, 60_000);

  it("a server that does not answer stops the start after INFRA_START_WAIT_S, naming its variable (ClickHouse, then Kafka)", async () => {
    const closed = await freePort();
    const runs: { env: Record<string, string>; server: string; named: string }[] = [
      { env: { CLICKHOUSE_URL: `https://127.0.0.1:${closed}` }, server: "ClickHouse", named: `CLICKHOUSE_URL=https://127.0.0.1:${closed}` },
      { env: { KAFKA_BROKERS: `127.0.0.1:${closed}` }, server: "Kafka", named: `KAFKA_BROKERS=127.0.0.1:${closed}` },
    ];
    for (const r of runs) {
      const started = Date.now();
      const run = trawl({ ...r.env, INFRA_START_WAIT_S: "5" });
      // exit status 1 (not killed by failedStart at 45 s), soon after the 5 s: before, an unreachable Kafka kept the start waiting for minutes
      expect(await failedStart(run)).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      const out = run.output();
      expect(out).toContain("INFRA_UNREACHABLE");
      expect(out).toContain(`could not reach ${r.server} at ${r.named} within INFRA_START_WAIT_S=5 s (last error: `);
      expect(out).toContain(`"msg":"waiting for ${r.server}"`);
      expect(leaks(out, PASSWORD)).toEqual([]);
    }
  }, 90_000);

  it("a missing CLICKHOUSE_CA_FILE stops the start naming it", async () => {
    const missing = join(dir, "no-such-ca.pem");
    const run = trawl({ CLICKHOUSE_CA_FILE: missing });
    expect(await failedStart(run)).toBe(2);
    expect(run.output()).toContain(`CLICKHOUSE_CA_FILE="${missing}" cannot be read (ENOENT)`);
  }, 60_000);

  it("a wrong password stops the start at once, and neither password is in its output", async () => {
    const run = trawl({ CLICKHOUSE_PASSWORD: WRONG });
    expect(await failedStart(run)).not.toBe(0);
    const out = run.output();
    expect(out).toContain("STORE_AUTH_REFUSED");
    expect(out).toContain("refused CLICKHOUSE_USER/CLICKHOUSE_PASSWORD (Wrong password for user default)");
    expect(leaks(out, WRONG)).toEqual([]);
    expect(leaks(out, PASSWORD)).toEqual([]);
  }, 60_000);

  it("a user and password inside CLICKHOUSE_URL are refused without being printed (trawl all, trawl keys)", async () => {
    const url = (ch?.httpsUrl ?? "").replace("https://", `https://default:${PASSWORD}@`);
    for (const args of [["all"], ["keys", "list", "--cluster"]]) {
      const run = trawl({ CLICKHOUSE_URL: url }, args);
      expect(await failedStart(run)).not.toBe(0);
      expect(run.output()).toContain("CLICKHOUSE_URL carries a user or password");
      expect(leaks(run.output(), PASSWORD)).toEqual([]);
    }
  }, 60_000);

  it("the errors of a refused password and of a server away carry no password, as text or as a logged error", async () => {
    const lines: string[] = [];
    const log = pino({ level: "debug" }, { write: (s: string) => void lines.push(s) });
    const away = `https://127.0.0.1:${await freePort()}`;
    for (const url of [ch?.httpsUrl ?? "", away]) {
      const client = new ClickHouseClient({ url, user: "default", password: WRONG, database: "system", caFile: certs.ca });
      const err = await client.query(raw("SELECT 1")).then(() => undefined, (e: unknown) => e as Error);
      expect(err?.message).toMatch(url === away ? /ECONNREFUSED/ : /Wrong password/);
      log.error({ err }, "failed");
      expect(leaks(`${String(err)} ${err?.stack} ${lines.join("")}`, WRONG)).toEqual([]);
    }
  }, 30_000);
});
