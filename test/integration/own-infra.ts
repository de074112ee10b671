// A private Kafka and ClickHouse for a test that restarts them: started through the project's scripts on free ports
// with their own TRAWL_INFRA_DIR, so the shared servers other tests use are never touched. Stopped by `stop()`.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..", "..");

type Service = "kafka" | "clickhouse";

export interface OwnInfra {
  kafkaBrokers: string;
  clickhouseUrl: string;
  dir: string;
  down(service: Service): Promise<void>;
  up(service: Service): Promise<void>;
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

export async function startOwnInfra(): Promise<OwnInfra> {
  const dir = mkdtempSync(join(tmpdir(), "trawl-own-infra-"));
  // Kafka's jars are installed once per machine (scripts/infra.sh install): reuse them instead of resolving again
  const sharedLibs = join(process.env.TRAWL_INFRA_DIR ?? join(root, ".infra"), "kafka", "libs");
  if (existsSync(join(sharedLibs, ".complete"))) {
    mkdirSync(join(dir, "kafka"), { recursive: true });
    symlinkSync(sharedLibs, join(dir, "kafka", "libs"));
  }
  const [kafka, controller, http, tcp] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    TRAWL_INFRA_DIR: dir,
    TRAWL_KAFKA_PORT: String(kafka),
    TRAWL_KAFKA_CONTROLLER_PORT: String(controller),
    TRAWL_CLICKHOUSE_HTTP_PORT: String(http),
    TRAWL_CLICKHOUSE_TCP_PORT: String(tcp),
  };
  const script = (service: string, cmd: string) => run("bash", [join(root, "scripts", `${service}.sh`), cmd], { env, timeout: 120_000 });
  const stop = async () => {
    await Promise.allSettled([script("kafka", "down"), script("clickhouse", "down")]);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.all([script("kafka", "up"), script("clickhouse", "up")]);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    kafkaBrokers: `127.0.0.1:${kafka}`,
    clickhouseUrl: `http://127.0.0.1:${http}`,
    dir,
    down: async (service) => void (await script(service, "down")),
    up: async (service) => void (await script(service, "up")),
    stop,
  };
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
  return {
    httpUrl: `http://127.0.0.1:${http}`,
    httpsUrl: `https://127.0.0.1:${https}`,
    down: async () => void (await script("down")),
    up: async () => void (await script("up")),
    stop,
  };
}
