// Starts Trawl (every role, in this process) against the real Kafka and ClickHouse, with its own topic prefix,
// consumer groups and database, so test files never see each other's data.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { start, ROLES, type Running } from "../../app/start.ts";
import { loadConfig, type Config } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { systemClock, type Clock } from "../../pipeline/runtime/clock.ts";
import { ClickHouseClient } from "../../pipeline/store/clickhouse.ts";
import { raw } from "../../pipeline/store/sql.ts";

export interface Instance {
  api: string;
  config: Config;
  running: Running;
  /** Stops the process and removes its data. */
  stop(): Promise<void>;
  /** Stops the process gracefully and starts it again on the same topics, groups, database or data directory. */
  restart(): Promise<Instance>;
}

export type Mode = Config["mode"];

/** Both modes run the same suites, so that no behaviour exists in one mode only. */
export const MODES: Mode[] = ["cluster", "embedded"];

/** `clock`: the time Trawl reads (a test moves it forward to see results expire); the system's by default. */
export async function startTrawl(overrides: Partial<Config> = {}, clock: Clock = systemClock): Promise<Instance> {
  const tag = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-test-"));
  const config = loadConfig(process.env, {
    dataDir,
    embeddedPartitions: 4,
    host: "127.0.0.1",
    port: 0,
    topicPrefix: `${tag}.`,
    groupPrefix: `${tag}.`,
    topicPartitions: 4,
    clickhouseDatabase: `trawl_${tag}`,
    allowPrivateCrawlTargets: true,
    logLevel: process.env.LOG_LEVEL ?? "error",
    fetchRetries: 1,
    webhookRetryDelaysMs: [200, 500],
    // the test machine is busy by design; the load guard has its own unit test
    maxCpu: 1,
    maxRam: 1,
    ...overrides,
  });
  return launch(config, tag, dataDir, clock);
}

async function launch(config: Config, tag: string, dataDir: string, clock: Clock): Promise<Instance> {
  const log = createLogger(config.logLevel, { test: tag });
  const running = await start(ROLES, config, log, clock);
  const { port } = running.server?.address() as AddressInfo;
  const instance: Instance = {
    api: `http://127.0.0.1:${port}`,
    config,
    running,
    async stop() {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
      if (config.mode === "embedded") return;
      const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase, caFile: config.clickhouseCaFile });
      await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
    },
    async restart() {
      await running.stop();
      return launch({ ...config, port }, tag, dataDir, clock);
    },
  };
  return instance;
}

export async function postJson(url: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

export async function getJson(url: string): Promise<{ status: number; body: any; bytes: number }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text), bytes: Buffer.byteLength(text) };
}

/** Polls the status until it leaves `scraping`; returns every status body seen. `resource`: crawl or batch/scrape. */
export async function waitForEnd(api: string, id: string, timeoutMs = 60_000, resource = "crawl"): Promise<any[]> {
  const seen: any[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { body } = await getJson(`${api}/v2/${resource}/${id}?limit=1`);
    seen.push(body);
    if (body.status !== "scraping") return seen;
    if (Date.now() > deadline) throw new Error(`crawl ${id} still scraping after ${timeoutMs} ms: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Follows `next` from the first chunk; returns every chunk. `resource`: crawl or batch/scrape. */
export async function allChunks(api: string, id: string, firstQuery = "", resource = "crawl"): Promise<{ body: any; bytes: number }[]> {
  const chunks: { body: any; bytes: number }[] = [];
  let url: string | undefined = `${api}/v2/${resource}/${id}${firstQuery}`;
  while (url) {
    const { status, body, bytes } = await getJson(url);
    if (status !== 200) throw new Error(`GET ${url} -> ${status} ${JSON.stringify(body)}`);
    chunks.push({ body, bytes });
    url = body.next;
    if (chunks.length > 1000) throw new Error("next never ends");
  }
  return chunks;
}
