// `trawl <role>`: wires the ports for one role (or all of them) and runs until SIGTERM/SIGINT, then drains.
import type { Server } from "node:http";
import { createApp } from "../api/app.ts";
import { FrontierProcessor } from "./frontier/frontier.ts";
import { FetchRenderProcessor } from "./fetch-render/fetch-render.ts";
import { UndiciFetcher } from "./fetch-render/fetcher.ts";
import { ConvertProcessor } from "./convert/convert.ts";
import { SinkProcessor } from "./sink/sink.ts";
import { systemClock } from "./runtime/clock.ts";
import { ConfigError, configTable, loadConfig, type Config } from "./runtime/config.ts";
import { createKafka, ensureTopics, KafkaBus } from "./runtime/kafka-bus.ts";
import { createLogger, type Logger } from "./runtime/logger.ts";
import { retry } from "./runtime/retry.ts";
import { startRunner, type RunnerHandle } from "./runtime/runner.ts";
import { ClickHouseClient } from "./store/clickhouse.ts";
import { ClickHouseCrawlStore } from "./store/clickhouse-crawl-store.ts";
import { CancelCache } from "./store/cancel-cache.ts";
import { migrate } from "./store/migrations.ts";
import { raw } from "./store/sql.ts";

export const ROLES = ["api", "frontier", "fetch-render", "convert", "sink"] as const;
type RoleName = (typeof ROLES)[number];

const USAGE = `usage: trawl <role>

roles:
  all            every role in one process
  api            HTTP API (POST/GET/DELETE /v2/crawl)
  frontier       crawl state machine over frontier.inbox
  fetch-render   fetches pages (fetch.tasks -> pages.fetched)
  convert        HTML -> markdown, links, metadata (pages.fetched -> crawl.pages)
  sink           stores documents (crawl.pages -> ClickHouse)
  config         print the configuration variables as a markdown table

Configuration comes from environment variables; see README.md.`;

export interface Running {
  config: Config;
  log: Logger;
  /** The API server when the api role runs. */
  server?: Server;
  stop(): Promise<void>;
}

/** Starts the given roles in this process. Used by the CLI and by tests. */
export async function start(roles: readonly RoleName[], config: Config, log: Logger): Promise<Running> {
  if (config.useDbAuthentication) {
    throw new ConfigError("config: USE_DB_AUTHENTICATION=true is not available in this version; set it to false (self-hosted, no authentication)");
  }
  const clock = systemClock;
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase });
  const patient = { retries: 20, initialMs: 250, maxMs: 3000, retriable: () => true, onRetry: (err: unknown, attempt: number) => log.warn({ err: (err as Error).message, attempt }, "waiting for infrastructure") };
  await retry(() => migrate(ch), patient);
  const kafka = createKafka(config, roles.length === 1 ? (roles[0] as string) : "all", log);
  await retry(() => ensureTopics(kafka, config, log), patient);
  const bus = new KafkaBus(kafka, config.topicPrefix);
  await bus.connect();
  const store = new ClickHouseCrawlStore(ch);
  const runners: RunnerHandle[] = [];
  const deps = { kafka, bus, config, log };
  const closers: (() => Promise<void>)[] = [];

  if (roles.includes("frontier")) runners.push(await startRunner(deps, new FrontierProcessor({ store, clock, log })));
  if (roles.includes("fetch-render")) {
    const fetcher = new UndiciFetcher({
      userAgent: config.userAgent, maxBytes: config.fetchMaxBytes, maxRedirects: config.fetchMaxRedirects, allowPrivate: config.allowPrivateCrawlTargets,
    });
    closers.push(() => fetcher.close());
    const cancels = new CancelCache(store, 1000, clock.now);
    runners.push(await startRunner(deps, new FetchRenderProcessor({ fetcher, cancels, log, defaultTimeoutMs: config.fetchTimeoutMs, retries: config.fetchRetries }, config.fetchConcurrency)));
  }
  if (roles.includes("convert")) runners.push(await startRunner(deps, new ConvertProcessor()));
  if (roles.includes("sink")) runners.push(await startRunner(deps, new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log })));

  let server: Server | undefined;
  if (roles.includes("api")) {
    log.warn("USE_DB_AUTHENTICATION is false: authentication is bypassed, every request is accepted");
    const app = createApp({ config, store, bus, clock, log, ready: async () => (await ch.query(raw("SELECT 1 AS ok"))).length === 1 });
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.port, config.host, () => resolve(s));
      s.once("error", reject);
    });
    const address = server.address();
    log.info({ address }, "api listening");
  }

  let stopped = false;
  return {
    config,
    log,
    server,
    async stop() {
      if (stopped) return;
      stopped = true;
      log.info("shutting down: draining in-flight work");
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => s.close(() => resolve()));
        s.closeAllConnections?.();
      }
      await Promise.all(runners.map((r) => r.stop()));
      await bus.close();
      for (const close of closers) await close();
      log.info("stopped");
    },
  };
}

export async function main(argv: string[]): Promise<void> {
  const role = argv[0];
  if (!role || role === "--help" || role === "-h" || role === "help") {
    console.log(USAGE);
    return;
  }
  if (role === "config") {
    console.log(configTable());
    return;
  }
  const roles: RoleName[] = role === "all" ? [...ROLES] : ROLES.includes(role as RoleName) ? [role as RoleName] : [];
  if (roles.length === 0) {
    console.error(`unknown role "${role}"\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    console.error((err as Error).message);
    process.exitCode = 2;
    return;
  }
  const log = createLogger(config.logLevel, { role });
  let running: Running;
  try {
    running = await start(roles, config, log);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exitCode = 2;
      return;
    }
    log.fatal({ err }, "could not start");
    process.exitCode = 1;
    return;
  }
  const shutdown = (signal: string) => {
    log.info({ signal }, "signal received");
    running.stop().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => shutdown("SIGTERM"));
  process.once("SIGINT", () => shutdown("SIGINT"));
}
