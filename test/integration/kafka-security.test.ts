// Trawl on a secured Kafka, for real: a private single-node broker with a SASL_SSL listener (SCRAM users set when
// its data directory is formatted; a CA and the broker's certificate made with openssl for this run) and an SSL
// listener that requires a client certificate, and a Schema Registry over HTTPS with Basic authentication (a small
// stand-in speaking the two calls Trawl makes, with a certificate of a second CA). `trawl all` in cluster mode crawls
// the fixture site through them; a wrong password, a missing CA file and a CA that did not sign the broker stop the
// start naming the variable; no secret reaches a log line or /metrics.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createKafka } from "../../pipeline/runtime/kafka-bus.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { postJson, waitForEnd } from "./harness.ts";
import { freePort, makeTestCertificates, startOwnInfra, type OwnInfra } from "./own-infra.ts";

const bin = join(import.meta.dirname, "..", "..", "bin", "trawl.js");
const USER = "trawl-crawler";
const PASSWORD = `kafka-${randomBytes(9).toString("hex")}`;
const REGISTRY_USER = "trawl-registry";
const REGISTRY_PASSWORD = `registry-${randomBytes(9).toString("hex")}`;
const LIMIT = 12;

let infra: OwnInfra | undefined;
let site: FixtureSite | undefined;
let registry: Server | undefined;
let registryUrl = "";
let registryCaFile = "";
const databases: string[] = [];
const children: ReturnType<typeof spawn>[] = [];

/** The two calls Trawl makes of a Confluent-compatible registry, over HTTPS, only with the right Basic credentials. */
async function startRegistry(tlsDir: string): Promise<{ server: Server; caFile: string }> {
  const { keystoreFile, caFile } = await makeTestCertificates(tlsDir);
  const pem = readFileSync(keystoreFile, "utf8");
  const schemas: string[] = [];
  const expected = `Basic ${Buffer.from(`${REGISTRY_USER}:${REGISTRY_PASSWORD}`).toString("base64")}`;
  const server = createServer({ key: pem, cert: pem }, (req, res) => {
    const reply = (status: number, body: unknown) => res.writeHead(status, { "content-type": "application/vnd.schemaregistry.v1+json" }).end(JSON.stringify(body));
    if (req.headers.authorization !== expected) return void reply(401, { error_code: 401, message: "Unauthorized" });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const byId = /^\/schemas\/ids\/(\d+)$/.exec(req.url ?? "");
      if (req.method === "POST" && /^\/subjects\/[^/]+\/versions$/.test(req.url ?? "")) {
        const { schema } = JSON.parse(Buffer.concat(chunks).toString()) as { schema: string };
        const id = schemas.includes(schema) ? schemas.indexOf(schema) + 1 : schemas.push(schema);
        return void reply(200, { id });
      }
      if (req.method === "GET" && byId && schemas[Number(byId[1]) - 1]) return void reply(200, { schemaType: "JSON", schema: schemas[Number(byId[1]) - 1] });
      reply(404, { error_code: 40403, message: "not found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, caFile };
}

beforeAll(async () => {
  const t0 = Date.now();
  [infra, site] = await Promise.all([
    // one node, a small heap: the broker is up in seconds
    startOwnInfra({ services: ["kafka"], saslSsl: { users: { [USER]: PASSWORD } }, mutualTls: true, kafkaHeapOpts: "-Xms128m -Xmx256m" }),
    startFixtureSite(),
  ]);
  console.log(`[kafka-security] broker with SASL_SSL and SSL listeners up in ${Date.now() - t0} ms`);
  ({ server: registry, caFile: registryCaFile } = await startRegistry(join(infra.dir, "registry-tls")));
  registryUrl = `https://127.0.0.1:${(registry.address() as AddressInfo).port}`;
}, 180_000);

afterAll(async () => {
  // a start that hangs (a failed assertion) must not outlive the test
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  registry?.close();
  await site?.close();
  await infra?.stop();
  const config = loadConfig(process.env);
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: "default" });
  for (const db of databases) await ch.exec(raw(`DROP DATABASE IF EXISTS ${db}`));
}, 120_000);

/** `trawl all` in cluster mode on the secured broker, with every line it writes kept. */
function trawl(port: number, env: Record<string, string>) {
  const tag = `s${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  databases.push(`trawl_${tag}`);
  const child = spawn(process.execPath, [bin, "all"], {
    env: {
      ...process.env,
      TRAWL_MODE: "cluster",
      KAFKA_BROKERS: infra!.saslSsl!.brokers,
      KAFKA_SECURITY_PROTOCOL: "SASL_SSL",
      KAFKA_SASL_MECHANISM: "SCRAM-SHA-512",
      KAFKA_SASL_USERNAME: USER,
      KAFKA_SASL_PASSWORD: PASSWORD,
      KAFKA_SSL_CA_FILE: infra!.saslSsl!.caFile,
      SCHEMA_REGISTRY_URL: "",
      KAFKA_TOPIC_PREFIX: `${tag}.`,
      KAFKA_GROUP_PREFIX: `${tag}.`,
      KAFKA_PARTITIONS: "2",
      CLICKHOUSE_DATABASE: `trawl_${tag}`,
      ALLOW_PRIVATE_CRAWL_TARGETS: "true",
      PORT: String(port),
      // every line Trawl and its Kafka client write, to look for the secrets in
      LOG_LEVEL: "debug",
      RENDER: "never",
      MAX_CPU: "1",
      MAX_RAM: "1",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe("Kafka with SASL_SSL (SCRAM-SHA-512, TLS with a private CA)", () => {
  it("crawls through the secured broker and an HTTPS registry with Basic auth; no secret in any log line or /metrics", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const t = trawl(port, { SCHEMA_REGISTRY_URL: registryUrl, SCHEMA_REGISTRY_USERNAME: REGISTRY_USER, SCHEMA_REGISTRY_PASSWORD: REGISTRY_PASSWORD, SCHEMA_REGISTRY_CA_FILE: registryCaFile });
    try {
      await until("the API", 90_000, async () => (await fetch(`${api}/ready`)).status === 200, t.output);
      const { status, body } = await postJson(`${api}/v2/crawl`, { url: `${site!.origin}/docs/`, limit: LIMIT });
      expect(status).toBe(200);
      const last = (await waitForEnd(api, body.id, 90_000)).at(-1);
      expect(last.status).toBe("completed");
      expect(last.completed).toBe(LIMIT);
      const metrics = await (await fetch(`${api}/metrics`)).text();
      expect(metrics.length).toBeGreaterThan(0);
      for (const secret of [PASSWORD, REGISTRY_PASSWORD]) {
        expect(metrics).not.toContain(secret);
        expect(t.output()).not.toContain(secret);
      }
      expect(t.output()).toContain("schema registered");
    } finally {
      t.child.kill("SIGTERM");
      await t.exited;
    }
    for (const secret of [PASSWORD, REGISTRY_PASSWORD]) expect(t.output()).not.toContain(secret);
  }, 240_000);

  it("logs in with SCRAM-SHA-256 too (the factory every Trawl Kafka client comes from)", async () => {
    const config = loadConfig({
      KAFKA_BROKERS: infra!.saslSsl!.brokers,
      KAFKA_SECURITY_PROTOCOL: "SASL_SSL",
      KAFKA_SASL_MECHANISM: "SCRAM-SHA-256",
      KAFKA_SASL_USERNAME: USER,
      KAFKA_SASL_PASSWORD: PASSWORD,
      KAFKA_SSL_CA_FILE: infra!.saslSsl!.caFile,
    });
    const admin = createKafka(config, "security-test", createLogger("silent")).admin();
    try {
      expect(Array.isArray(await admin.listTopics())).toBe(true);
    } finally {
      await admin.close();
    }
  }, 30_000);

  it("connects with a client certificate (KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE) where the broker requires one, and not without", async () => {
    const ssl = infra!.ssl!;
    const env = { KAFKA_BROKERS: ssl.brokers, KAFKA_SECURITY_PROTOCOL: "SSL", KAFKA_SSL_CA_FILE: ssl.caFile };
    // few retries, as a start's own first client has (app/infrastructure.ts): a refused connection fails within seconds
    const listTopics = async (config: ReturnType<typeof loadConfig>) => {
      const admin = createKafka(config, "security-test", createLogger("silent"), 1).admin();
      try {
        return await admin.listTopics();
      } finally {
        await admin.close();
      }
    };
    expect(Array.isArray(await listTopics(loadConfig({ ...env, KAFKA_SSL_CERT_FILE: ssl.certFile, KAFKA_SSL_KEY_FILE: ssl.keyFile })))).toBe(true);
    await expect(listTopics(loadConfig(env))).rejects.toThrow();
  }, 90_000);

  it("stops the start when the broker refuses the password, naming KAFKA_SASL_PASSWORD and showing no password", async () => {
    const wrong = `wrong-${randomBytes(9).toString("hex")}`;
    const t = trawl(await freePort(), { KAFKA_SASL_PASSWORD: wrong });
    const code = await t.exited;
    expect(code, t.output()).toBe(2);
    expect(t.output()).toContain("KAFKA_SASL_PASSWORD");
    expect(t.output()).toContain(`KAFKA_SASL_USERNAME="${USER}"`);
    expect(t.output()).not.toContain(wrong);
    expect(t.output()).not.toContain(PASSWORD);
  }, 120_000);

  it("stops the start when KAFKA_SSL_CA_FILE cannot be read, naming it", async () => {
    const missing = join(infra!.dir, "no-such-ca.pem");
    const t = trawl(await freePort(), { KAFKA_SSL_CA_FILE: missing });
    const code = await t.exited;
    expect(code, t.output()).toBe(2);
    expect(t.output()).toContain(`KAFKA_SSL_CA_FILE="${missing}" cannot be read`);
    expect(t.output()).not.toContain(PASSWORD);
  }, 60_000);

  it("stops the start when KAFKA_SSL_CA_FILE does not sign the broker's certificate, naming it", async () => {
    const t0 = Date.now();
    const t = trawl(await freePort(), { KAFKA_SSL_CA_FILE: registryCaFile });
    const code = await t.exited;
    expect(code, t.output()).toBe(2);
    expect(t.output()).toMatch(/the Kafka broker's TLS certificate is not trusted \([A-Z_]+\): check KAFKA_SSL_CA_FILE="([^"]+)"/);
    expect(t.output()).toContain(`KAFKA_SSL_CA_FILE="${registryCaFile}"`);
    console.log(`[kafka-security] untrusted certificate: start stopped after ${Date.now() - t0} ms`);
  }, 120_000);
});
