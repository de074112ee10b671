// A private Kafka and ClickHouse for a test that restarts them: started through the project's scripts on free ports
// with their own TRAWL_INFRA_DIR, so the shared servers other tests use are never touched. Stopped by `stop()`.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Admin } from "@platformatic/kafka";


const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");

type Service = "kafka" | "clickhouse";

export interface OwnInfra {
  kafkaBrokers: string;
  clickhouseUrl: string;
  dir: string;
  /** With `saslSsl`: the broker's SASL_SSL listener and the PEM file of the CA that signed its certificate. */
  saslSsl?: { brokers: string; caFile: string };
  /** With `mutualTls`: the broker's SSL listener (client certificate required), the CA, a client certificate and key. */
  ssl?: { brokers: string; caFile: string; certFile: string; keyFile: string };
  /** Stops or starts a service; with `node`, only that Kafka node of several. */
  down(service: Service, node?: number): Promise<void>;
  /** kill -9 of Kafka node `node` (1-based; 1 with one node): no controlled shutdown, leaders move once it is fenced. */
  kill9Kafka(node: number): Promise<void>;
  up(service: Service, node?: number): Promise<void>;
  stop(): Promise<void>;
}

/** A port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export interface OwnInfraOptions {
  /** Which servers to start (default both). */
  services?: Service[];
  /** A SASL_SSL listener besides the plaintext one, with these SCRAM-SHA-256/512 users (user → password). */
  saslSsl?: { users: Record<string, string> };
  /** An SSL listener besides, that requires a client certificate signed by the same CA. */
  mutualTls?: boolean;
  /** The broker's JVM heap options (TRAWL_KAFKA_HEAP_OPTS). */
  kafkaHeapOpts?: string;
  /** Several Kafka nodes (TRAWL_KAFKA_NODES), each broker and controller, on 2 × nodes consecutive ports from `kafkaPort`. */
  kafkaNodes?: number;
  /** More broker properties (TRAWL_KAFKA_PROPS), e.g. { "leader.imbalance.check.interval.seconds": "5" }. */
  kafkaProps?: Record<string, string>;
  /** First port of the Kafka nodes (default: free ports anywhere; with several nodes, the first free run of ports from here). */
  kafkaPort?: number;
}

/** The first port of `count` consecutive ports nobody listens on, from `from` (below `to`). */
export async function freePortRun(count: number, from: number, to: number): Promise<number> {
  const free = async (port: number) => {
    const s = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      s.once("error", () => resolve(false));
      s.listen(port, "127.0.0.1", () => resolve(true));
    });
    if (ok) await new Promise<void>((resolve) => s.close(() => resolve()));
    return ok;
  };
  for (let base = from; base + count <= to; base++) {
    let n = 0;
    while (n < count && (await free(base + n))) n++;
    if (n === count) return base;
    base += n;
  }
  throw new Error(`no ${count} consecutive free ports in ${from}-${to}`);
}

/**
 * A CA and a certificate it signs for 127.0.0.1 and localhost, made with openssl in `dir` (valid a day): the CA's
 * PEM file for clients, the broker's keystore (unencrypted PKCS#8 key and certificate, Kafka's PEM keystore) and a
 * client certificate with its key.
 */
export async function makeTestCertificates(dir: string): Promise<{ caFile: string; keystoreFile: string; clientCertFile: string; clientKeyFile: string }> {
  mkdirSync(dir, { recursive: true });
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => run("openssl", args, { cwd: dir });
  writeFileSync(at("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  await openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=trawl-test-ca");
  await openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "broker.key", "-out", "broker.csr", "-subj", "/CN=127.0.0.1");
  await openssl("x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "broker.crt", "-days", "1", "-extfile", "san.ext");
  writeFileSync(at("broker-keystore.pem"), readFileSync(at("broker.key"), "utf8") + readFileSync(at("broker.crt"), "utf8"));
  await openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=trawl-test-client");
  await openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "client.crt", "-days", "1");
  return { caFile: at("ca.pem"), keystoreFile: at("broker-keystore.pem"), clientCertFile: at("client.crt"), clientKeyFile: at("client.key") };
}

export async function startOwnInfra(opts: OwnInfraOptions = {}): Promise<OwnInfra> {
  const services = opts.services ?? ["kafka", "clickhouse"];
  const dir = mkdtempSync(join(tmpdir(), "trawl-own-infra-"));
  // Kafka's jars are installed once per machine (scripts/infra.sh install): reuse them instead of resolving again
  // (TRAWL_KAFKA_VERSION: another version's, in a directory of its own, scripts/kafka.sh)
  const kafkaDir = process.env.TRAWL_KAFKA_VERSION ? `kafka-${process.env.TRAWL_KAFKA_VERSION}` : "kafka";
  const sharedLibs = join(process.env.TRAWL_INFRA_DIR ?? join(root, ".infra"), kafkaDir, "libs");
  if (existsSync(join(sharedLibs, ".complete"))) {
    mkdirSync(join(dir, kafkaDir), { recursive: true });
    symlinkSync(sharedLibs, join(dir, kafkaDir, "libs"));
  }
  const nodes = opts.kafkaNodes ?? 1;
  // TRAWL_OWN_KAFKA_PORT: where this run's brokers go instead (engineers sharing a machine, each in a port range)
  const firstPort = process.env.TRAWL_OWN_KAFKA_PORT ? Number(process.env.TRAWL_OWN_KAFKA_PORT) : opts.kafkaPort;
  const kafkaBase = nodes > 1 ? await freePortRun(2 * nodes, firstPort ?? 19240, (firstPort ?? 19240) + 60) : firstPort;
  const [kafka, controller] = kafkaBase ? [kafkaBase, kafkaBase + 1] : [await freePort(), await freePort()];
  const [http, tcp, secured, mutual] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const tls = opts.saslSsl || opts.mutualTls ? await makeTestCertificates(join(dir, "tls")) : undefined;
  const env = {
    ...process.env,
    ...(opts.saslSsl && tls
      ? {
          TRAWL_KAFKA_SASL_SSL_PORT: String(secured),
          TRAWL_KAFKA_SSL_KEYSTORE: tls.keystoreFile,
          TRAWL_KAFKA_SCRAM_USERS: Object.entries(opts.saslSsl.users).map(([u, p]) => `${u}=${p}`).join(" "),
        }
      : {}),
    ...(opts.mutualTls && tls ? { TRAWL_KAFKA_SSL_PORT: String(mutual), TRAWL_KAFKA_SSL_KEYSTORE: tls.keystoreFile, TRAWL_KAFKA_SSL_TRUSTSTORE: tls.caFile } : {}),
    ...(opts.kafkaHeapOpts ? { TRAWL_KAFKA_HEAP_OPTS: opts.kafkaHeapOpts } : {}),
    ...(opts.kafkaProps ? { TRAWL_KAFKA_PROPS: Object.entries(opts.kafkaProps).map(([k, v]) => `${k}=${v}`).join(" ") } : {}),
    TRAWL_INFRA_DIR: dir,
    TRAWL_KAFKA_NODES: String(nodes),
    // three JVMs starting at once on a loaded machine: a node is ready only once a majority of the quorum runs
    ...(nodes > 1 ? { TRAWL_INFRA_READY_S: "240" } : {}),
    TRAWL_KAFKA_PORT: String(kafka),
    TRAWL_KAFKA_CONTROLLER_PORT: String(controller),
    TRAWL_CLICKHOUSE_HTTP_PORT: String(http),
    TRAWL_CLICKHOUSE_TCP_PORT: String(tcp),
  };
  const script = (service: string, cmd: string, ...args: string[]) => run("bash", [join(root, "scripts", `${service}.sh`), cmd, ...args], { env, timeout: nodes > 1 ? 300_000 : 120_000 });
  const stop = async () => {
    // several nodes whose data is thrown away: kill -9 (once a node is down, the last one stopped gracefully has no
    // quorum left and waits out its shutdown, 30 s)
    if (nodes > 1 && services.includes("kafka")) {
      await Promise.allSettled(Array.from({ length: nodes }, (_, i) => kill9Pid(join(dir, kafkaDir, `node${i + 1}`, "kafka.pid"))));
    }
    await Promise.allSettled(services.map((s) => script(s, "down")));
    rmSync(dir, { recursive: true, force: true });
  };
  const kafkaBrokers = Array.from({ length: nodes }, (_, i) => `127.0.0.1:${kafka + 2 * i}`).join(",");
  try {
    await Promise.all(services.map((s) => script(s, "up")));
    // each node is ready once it serves, but the others may not have registered with the quorum yet: topics created
    // then got fewer replicas than asked (kafka-three-brokers.test.ts on 3.9.1: two of six runs had 2 of 3)
    if (nodes > 1 && services.includes("kafka")) await everyBrokerRegistered(kafkaBrokers, nodes);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    kafkaBrokers,
    clickhouseUrl: `http://127.0.0.1:${http}`,
    dir,
    ...(opts.saslSsl && tls ? { saslSsl: { brokers: `127.0.0.1:${secured}`, caFile: tls.caFile } } : {}),
    ...(opts.mutualTls && tls ? { ssl: { brokers: `127.0.0.1:${mutual}`, caFile: tls.caFile, certFile: tls.clientCertFile, keyFile: tls.clientKeyFile } } : {}),
    down: async (service, node) => void (await script(service, "down", ...(node ? [String(node)] : []))),
    up: async (service, node) => void (await script(service, "up", ...(node ? [String(node)] : []))),
    kill9Kafka: (node) => kill9Pid(join(dir, kafkaDir, ...(nodes > 1 ? [`node${node}`] : []), "kafka.pid")),
    stop,
  };
}

/** The partition of `__consumer_offsets` (of `partitions`) whose leader coordinates `groupId`: Java's String.hashCode. */
export function coordinatorPartition(groupId: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < groupId.length; i++) h = (Math.imul(31, h) + groupId.charCodeAt(i)) | 0;
  return Math.abs(h) % partitions;
}

/** Waits (up to 120 s) until the cluster's metadata lists `nodes` brokers. */
async function everyBrokerRegistered(brokers: string, nodes: number): Promise<void> {
  const admin = new Admin({ clientId: "own-infra", bootstrapBrokers: brokers.split(","), retries: 0 });
  try {
    const end = Date.now() + 120_000;
    for (;;) {
      const listed = (await admin.metadata({ topics: [], forceUpdate: true }).catch(() => ({ brokers: new Map() }))).brokers.size;
      if (listed >= nodes) return;
      if (Date.now() > end) throw new Error(`only ${listed} of ${nodes} Kafka brokers registered after 120 s`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await admin.close().catch(() => undefined);
  }
}

/** kill -9 of the server whose pid `pidFile` holds, once it is gone (its parent was a script's shell: init reaps it). */
async function kill9Pid(pidFile: string): Promise<void> {
  const pid = Number(readFileSync(pidFile, "utf8"));
  process.kill(pid, "SIGKILL");
  const alive = () => {
    try {
      process.kill(pid, 0);
      // a zombie (no init that reaps, as in some containers) is gone too
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      return false; // ESRCH or no /proc entry: gone
    }
  };
  while (alive()) await new Promise((r) => setTimeout(r, 50));
}

export interface OwnClickHouse {
  /** http:// on its HTTP port. */
  httpUrl: string;
  /** https:// on its HTTPS port (when started with `tls`). */
  httpsUrl: string;
  down(): Promise<void>;
  up(): Promise<void>;
  stop(): Promise<void>;
}

/** `scripts/clickhouse.sh up` with `env` (a failed start is stopped); `stop` runs `down` and removes `dir`. */
async function clickhouseUp(env: NodeJS.ProcessEnv, dir: string): Promise<{ script: (cmd: string) => Promise<unknown>; stop: () => Promise<void> }> {
  const script = (cmd: string) => run("bash", [join(root, "scripts", "clickhouse.sh"), cmd], { env, timeout: 120_000 });
  const stop = async () => {
    await Promise.allSettled([script("down")]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await script("up");
  } catch (err) {
    await stop();
    throw err;
  }
  return { script, stop };
}

/**
 * A private ClickHouse only (scripts/clickhouse.sh, its own ports and data directory): with `tls`, also HTTPS with that
 * certificate and key (PEM files); with `password`, the default user needs it.
 */
export async function startOwnClickHouse(opts: { tls?: { cert: string; key: string }; password?: string } = {}): Promise<OwnClickHouse> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-own-clickhouse-"));
  const [http, tcp, https] = [await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    TRAWL_INFRA_DIR: dir,
    TRAWL_CLICKHOUSE_HTTP_PORT: String(http),
    TRAWL_CLICKHOUSE_TCP_PORT: String(tcp),
    ...(opts.tls ? { TRAWL_CLICKHOUSE_HTTPS_PORT: String(https), TRAWL_CLICKHOUSE_TLS_CERT: opts.tls.cert, TRAWL_CLICKHOUSE_TLS_KEY: opts.tls.key } : {}),
    TRAWL_CLICKHOUSE_PASSWORD: opts.password ?? "",
  };
  const { script, stop } = await clickhouseUp(env, dir);
  return {
    httpUrl: `http://127.0.0.1:${http}`,
    httpsUrl: `https://127.0.0.1:${https}`,
    down: async () => void (await script("down")),
    up: async () => void (await script("up")),
    stop,
  };
}

export interface OwnClickHouseCluster {
  /** http:// URL of each replica, in order (joined by commas: a CLICKHOUSE_URL). */
  urls: string[];
  cluster: string;
  /** kill -9 of replica `i` (0-based): no shutdown, no goodbye to ZooKeeper. */
  kill9(i: number): Promise<void>;
  /** The data directory of replica `i` (0-based): removed while it is down, it comes back as a replaced disk. */
  dataDir(i: number): string;
  /** Starts again the replicas that are not running. */
  up(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A private ClickHouse cluster (scripts/clickhouse.sh with TRAWL_CLICKHOUSE_REPLICAS): ZooKeeper on `basePort` and
 * `replicas` servers as replicas of one shard, HTTP on basePort + 10 + i, native on + 20 + i, interserver on + 30 + i.
 */
export async function startOwnClickHouseCluster(basePort: number, replicas = 2): Promise<OwnClickHouseCluster> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-own-ch-cluster-"));
  const cluster = "trawl_test";
  const env = {
    ...process.env,
    TRAWL_INFRA_DIR: dir,
    TRAWL_CLICKHOUSE_REPLICAS: String(replicas),
    TRAWL_CLICKHOUSE_CLUSTER: cluster,
    TRAWL_ZOOKEEPER_PORT: String(basePort),
    TRAWL_CLICKHOUSE_HTTP_PORT: String(basePort + 10),
    TRAWL_CLICKHOUSE_TCP_PORT: String(basePort + 20),
    TRAWL_CLICKHOUSE_INTERSERVER_PORT: String(basePort + 30),
    TRAWL_CLICKHOUSE_HTTPS_PORT: "",
    TRAWL_CLICKHOUSE_PASSWORD: "",
  };
  const { script, stop } = await clickhouseUp(env, dir);
  return {
    urls: Array.from({ length: replicas }, (_, i) => `http://127.0.0.1:${basePort + 10 + i}`),
    cluster,
    kill9: (i) => kill9Pid(join(dir, "clickhouse", `replica-${i + 1}`, "clickhouse.pid")),
    dataDir: (i) => join(dir, "clickhouse", `replica-${i + 1}`, "data"),
    up: async () => void (await script("up")),
    stop,
  };
}
