// `trawl <role>`: wires the ports for one role (or all of them) and runs until SIGTERM/SIGINT, then drains.
import type { Server } from "node:http";
import { resolve } from "node:path";
import type { WebSocketServer } from "ws";
import { createApp } from "../api/app.ts";
import { ApiEventsProcessor, EventHub } from "../api/event-hub.ts";
import { attachWatch } from "../api/ws.ts";
import { FrontierProcessor } from "../pipeline/frontier/frontier.ts";
import { FetchRenderProcessor } from "../pipeline/fetch-render/fetch-render.ts";
import { UndiciFetcher } from "../pipeline/fetch-render/fetcher.ts";
import { RobotsCache } from "../pipeline/fetch-render/robots.ts";
import { Politeness } from "../pipeline/fetch-render/politeness.ts";
import { guardedAgent } from "../pipeline/net/guarded-agent.ts";
import { LoadGuard, systemSampler } from "../pipeline/fetch-render/load-guard.ts";
import { RETENTION_MS } from "../pipeline/runtime/constants.ts";
import { WebhookEmitter } from "../pipeline/webhook-emit/emitter.ts";
import { WebhookDeliverer } from "../pipeline/webhook-emit/deliverer.ts";
import { ConvertProcessor } from "../pipeline/convert/convert.ts";
import { ConvertPool } from "../pipeline/convert/worker-pool.ts";
import { pageConverter } from "../pipeline/convert/converter.ts";
import { SinkProcessor } from "../pipeline/sink/sink.ts";
import { systemClock, type Clock } from "../pipeline/runtime/clock.ts";
import type { Bus, Processor, QueueStat } from "../pipeline/runtime/bus.ts";
import { EmbeddedBus } from "../pipeline/runtime/embedded-bus.ts";
import { EmbeddedCrawlStore } from "../pipeline/store/embedded-crawl-store.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { ConfigError, configTable, loadConfig, type Config } from "../pipeline/runtime/config.ts";
import { TrawlError } from "../pipeline/runtime/errors.ts";
import { createKafka, ensureTopics, KafkaBus, kafkaQueueStats } from "../pipeline/runtime/kafka-bus.ts";
import { connectRegistry } from "../pipeline/runtime/registry.ts";
import { EmbeddedPageCache, type PageCache } from "../pipeline/store/page-cache.ts";
import { ClickHousePageCache } from "../pipeline/store/clickhouse-page-cache.ts";
import { createLogger, type Logger } from "../pipeline/runtime/logger.ts";
import { retry } from "../pipeline/runtime/retry.ts";
import { startRunner, type RunnerHandle } from "../pipeline/runtime/runner.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../pipeline/store/clickhouse-crawl-store.ts";
import { CancelCache } from "../pipeline/store/cancel-cache.ts";
import { migrate } from "../pipeline/store/migrations.ts";
import { raw } from "../pipeline/store/sql.ts";
import { checkAdminKey } from "../api/admin-key.ts";
import { parseCorsOrigins } from "../api/cors.ts";

export const ROLES = ["api", "frontier", "fetch-render", "convert", "sink", "webhook-emit"] as const;
type RoleName = (typeof ROLES)[number];

const USAGE = `usage: trawl <role> | trawl crawl <url> [options] | trawl scrape <url>

commands:
  crawl <url>    crawl a site to files, in this process, no server needed (trawl crawl --help)
  scrape <url>   print one page's document as JSON

roles:
  all            every role in one process (add --embedded: no Kafka, no ClickHouse)
  api            HTTP API (POST/GET/DELETE /v2/crawl)
  frontier       crawl state machine over frontier.inbox
  fetch-render   fetches pages (fetch.tasks -> pages.fetched)
  convert        HTML -> markdown, links, metadata (pages.fetched -> crawl.pages)
  sink           stores documents (crawl.pages -> ClickHouse)
  webhook-emit   signed webhooks with retries (crawl.events -> webhook.deliveries -> HTTP)
  config         print the configuration variables as a markdown table

Configuration comes from environment variables; see README.md.`;

export interface Running {
  config: Config;
  log: Logger;
  store: CrawlStore;
  bus: Bus;
  clock: Clock;
  /** The API server when the api role runs. */
  server?: Server;
  stop(): Promise<void>;
}

interface Infrastructure {
  bus: Bus;
  store: CrawlStore;
  cache: PageCache;
  run<T, B>(processor: Processor<T, B>): Promise<RunnerHandle>;
  ready(): Promise<boolean>;
  queueStats(): Promise<QueueStat[]>;
  /** Every processor of this process is running. */
  started?(): void;
  close(): Promise<void>;
}

/** Kafka + ClickHouse: migrations and topics first (waiting for the servers), then a producer. */
async function clusterInfrastructure(roles: readonly RoleName[], config: Config, log: Logger): Promise<Infrastructure> {
  const ch = new ClickHouseClient({ url: config.clickhouseUrl, user: config.clickhouseUser, password: config.clickhousePassword, database: config.clickhouseDatabase });
  const patient = { retries: 20, initialMs: 250, maxMs: 3000, retriable: () => true, onRetry: (err: unknown, attempt: number) => log.warn({ err: (err as Error).message, attempt }, "waiting for infrastructure") };
  await retry(() => migrate(ch), patient);
  const kafka = createKafka(config, roles.length === 1 ? (roles[0] as string) : "all", log);
  await retry(() => ensureTopics(kafka, config, log), patient);
  const registry = config.schemaRegistryUrl ? await retry(() => connectRegistry(config.schemaRegistryUrl, config.topicPrefix, log), { ...patient, retriable: (err) => !(err instanceof TrawlError) || err.retriable }) : undefined;
  const bus = new KafkaBus(kafka, config.topicPrefix, registry);
  await bus.connect();
  const cache = new ClickHousePageCache(ch, log);
  return {
    bus,
    store: new ClickHouseCrawlStore(ch),
    cache,
    run: (processor) => startRunner({ kafka, bus, config, log }, processor),
    ready: async () => (await ch.query(raw("SELECT 1 AS ok"))).length === 1,
    queueStats: () => kafkaQueueStats(kafka, config),
    close: async () => {
      await cache.close();
      await bus.close();
    },
  };
}

/** No server: the in-process bus and the on-disk store under DATA_DIR. */
async function embeddedInfrastructure(config: Config, log: Logger, clock: Clock): Promise<Infrastructure> {
  const dir = resolve(config.dataDir);
  const bus = await EmbeddedBus.open({ partitions: config.embeddedPartitions, dir, log });
  const store = await EmbeddedCrawlStore.open(dir, clock.now());
  const cache = await EmbeddedPageCache.open(dir, clock.now() - config.cacheMaxAgeMs);
  log.info({ dataDir: dir }, "embedded mode: no Kafka, no ClickHouse");
  if (config.schemaRegistryUrl) log.warn({ schemaRegistryUrl: config.schemaRegistryUrl }, "SCHEMA_REGISTRY_URL is ignored in embedded mode (no Kafka topics)");
  return {
    bus,
    store,
    cache,
    run: async (processor) => bus.consume(processor, log),
    ready: async () => true,
    queueStats: () => bus.queueStats(),
    started: () => bus.trimUnconsumed(),
    close: async () => {
      await bus.close();
      await store.close();
      await cache.close();
    },
  };
}

/** Starts the given roles in this process. Used by the CLI and by tests. */
export async function start(roles: readonly RoleName[], config: Config, log: Logger): Promise<Running> {
  if (config.useDbAuthentication) {
    throw new ConfigError("config: USE_DB_AUTHENTICATION=true is not available in this version; set it to false (self-hosted, no authentication)");
  }
  parseDelays(config.webhookRetryDelaysMs);
  if (roles.includes("api")) {
    checkAdminKey(config.host, config.adminKey);
    parseCorsOrigins(config.corsAllowedOrigins);
  }
  parseResolve(config.resolve);
  parseProxy(config);
  const clock = systemClock;
  const infra = config.mode === "embedded" ? await embeddedInfrastructure(config, log, clock) : await clusterInfrastructure(roles, config, log);
  const { bus, store, cache } = infra;
  const cacheDeps = { cache, cacheMaxAgeMs: config.cacheMaxAgeMs, now: () => clock.now(), log };
  const runners: RunnerHandle[] = [];
  const closers: (() => Promise<void>)[] = [];

  if (roles.includes("frontier")) {
    runners.push(await infra.run(new FrontierProcessor({ store, clock, log })));
    // retention: results are served for 24 h after a crawl ended, then deleted
    const sweep = setInterval(() => {
      store.deleteExpired(clock.now(), RETENTION_MS).then(
        (ids) => ids.length && log.info({ crawls: ids.length }, "expired crawls deleted"),
        (err) => log.warn({ err: (err as Error).message }, "retention sweep failed; will retry"),
      );
      cache.deleteBefore(clock.now() - config.cacheMaxAgeMs).catch((err) => log.warn({ err: (err as Error).message }, "page cache sweep failed; will retry"));
    }, config.retentionSweepMs);
    sweep.unref();
    closers.push(async () => clearInterval(sweep));
  }
  if (roles.includes("fetch-render")) {
    const fetcher = pageFetcher(config);
    closers.push(() => fetcher.close());
    const processor = new FetchRenderProcessor({
      fetcher,
      robots: new RobotsCache({ fetcher, ttlMs: config.robotsCacheTtlMs, timeoutMs: Math.min(config.fetchTimeoutMs, 10_000), now: clock.now }),
      politeness: new Politeness(clock.now),
      cancels: new CancelCache(store, 1000, clock.now),
      log,
      defaultTimeoutMs: config.fetchTimeoutMs,
      retries: config.fetchRetries,
      retryAfterMaxMs: config.retryAfterMaxMs,
      robotsUserAgent: config.robotsUserAgent,
      hostMaxConcurrency: config.hostMaxConcurrency,
      hostDelayMs: config.hostDelayMs,
      maxSitemaps: config.maxSitemaps,
      sitemapMaxBytes: config.sitemapMaxBytes,
      cache,
      cacheMaxAgeMs: config.cacheMaxAgeMs,
      now: () => clock.now(),
      load: new LoadGuard({
        maxCpu: config.maxCpu, maxRam: config.maxRam, sample: systemSampler(),
        onOverload: (s) => log.warn({ cpu: +s.cpu.toFixed(2), ram: +s.ram.toFixed(2), maxCpu: config.maxCpu, maxRam: config.maxRam }, "machine above MAX_CPU/MAX_RAM: no new page until it drops"),
      }),
    }, config.fetchConcurrency);
    runners.push(await infra.run(processor));
  }
  // one pool per process, shared by the convert stage and POST /v2/scrape
  const pool = (roles.includes("convert") || roles.includes("api")) && config.convertWorkers > 0 ? new ConvertPool({ size: config.convertWorkers, timeoutMs: config.convertTimeoutMs }) : null;
  if (pool) closers.push(() => pool.close());
  if (roles.includes("convert")) runners.push(await infra.run(new ConvertProcessor(pool, config.convertWorkers)));
  if (roles.includes("sink")) runners.push(await infra.run(new SinkProcessor({ store, cancels: new CancelCache(store, 0, clock.now), clock, log })));
  if (roles.includes("webhook-emit")) {
    if (!config.webhookSecret) log.warn("SELF_HOSTED_WEBHOOK_HMAC_SECRET is empty: webhooks are sent without a signature");
    const agent = guardedAgent({ allowPrivate: config.allowLocalWebhooks, resolve: parseResolve(config.resolve), connections: 16 });
    closers.push(() => agent.close());
    runners.push(await infra.run(new WebhookEmitter({ store, clock, log, secret: config.webhookSecret })));
    runners.push(await infra.run(new WebhookDeliverer({
      agent, store, clock, log, allowLocal: config.allowLocalWebhooks, timeoutMs: config.webhookTimeoutMs,
      maxAttempts: config.webhookMaxAttempts, retryDelaysMs: parseDelays(config.webhookRetryDelaysMs),
    })));
  }

  let server: Server | undefined;
  let wss: WebSocketServer | undefined;
  if (roles.includes("api")) {
    const hub = new EventHub();
    runners.push(await infra.run(new ApiEventsProcessor(hub)));
    log.warn("USE_DB_AUTHENTICATION is false: authentication is bypassed, every request is accepted");
    const apiFetcher = pageFetcher(config);
    closers.push(() => apiFetcher.close());
    const app = createApp({ config, store, bus, clock, log, ready: () => infra.ready(), fetcher: apiFetcher, convert: pageConverter(pool), cache: cacheDeps, queueStats: () => infra.queueStats() });
    server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(config.port, config.host, () => resolve(s));
      s.once("error", reject);
    });
    wss = attachWatch(server, { store, hub, clock, log });
    const address = server.address();
    log.info({ address }, "api listening");
  }

  infra.started?.();

  let stopped = false;
  return {
    config,
    log,
    store,
    bus,
    clock,
    server,
    async stop() {
      if (stopped) return;
      stopped = true;
      log.info("shutting down: draining in-flight work");
      if (wss) {
        for (const client of wss.clients) client.close(1001, JSON.stringify({ type: "error", error: "server shutting down" }));
        wss.close();
      }
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => s.close(() => resolve()));
        s.closeAllConnections?.();
      }
      await Promise.all(runners.map((r) => r.stop()));
      await infra.close();
      for (const close of closers) await close();
      log.info("stopped");
    },
  };
}

/** The page fetcher as the configuration describes it (stages, the scrape route and the CLI share it). */
export function pageFetcher(config: Config): UndiciFetcher {
  const proxy = parseProxy(config);
  return new UndiciFetcher({
    userAgent: config.userAgent, maxBytes: config.fetchMaxBytes, maxRedirects: config.fetchMaxRedirects,
    allowPrivate: config.allowPrivateCrawlTargets, resolve: parseResolve(config.resolve), ...(proxy ? { proxy } : {}),
  });
}

/** PROXY_SERVER (`http://host:port`, `https://…` or `host:port`) and its credentials, or undefined when unset. */
export function parseProxy(config: Pick<Config, "proxyServer" | "proxyUsername" | "proxyPassword">): { uri: string; username?: string; password?: string } | undefined {
  const raw = config.proxyServer.trim();
  if (!raw) return undefined;
  const bad = (why: string) => new ConfigError(`config: PROXY_SERVER=${JSON.stringify(raw)} is invalid: ${why}`);
  let u: URL;
  try {
    u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`);
  } catch {
    throw bad("expected http://host:port or host:port");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw bad("only http and https proxies are supported");
  if (!u.hostname || !u.port) throw bad("expected a host and a port");
  return { uri: `${u.protocol}//${u.host}`, ...(config.proxyUsername ? { username: config.proxyUsername, password: config.proxyPassword } : {}) };
}

/** `60000,300000` -> [60000, 300000] */
export function parseDelays(spec: string): number[] {
  const list = spec.split(",").map((x) => x.trim()).filter(Boolean);
  if (list.length === 0 || list.some((x) => !/^\d+$/.test(x))) {
    throw new ConfigError(`config: WEBHOOK_RETRY_DELAYS_MS=${JSON.stringify(spec)} is invalid: expected comma-separated milliseconds`);
  }
  return list.map(Number);
}

/** `a.test:127.0.0.1,b.test:::1` -> { "a.test": "127.0.0.1", "b.test": "::1" } */
export function parseResolve(spec: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of spec.split(",").map((x) => x.trim()).filter(Boolean)) {
    const i = item.indexOf(":");
    if (i <= 0) throw new ConfigError(`config: RESOLVE entry ${JSON.stringify(item)} is invalid: expected host:address`);
    out[item.slice(0, i).toLowerCase()] = item.slice(i + 1);
  }
  return out;
}

export async function main(argv: string[]): Promise<void> {
  const embedded = argv.includes("--embedded");
  argv = argv.filter((a) => a !== "--embedded");
  const role = argv[0];
  if (!role || role === "--help" || role === "-h" || role === "help") {
    console.log(USAGE);
    return;
  }
  if (role === "config") {
    console.log(configTable());
    return;
  }
  if (role === "crawl" || role === "scrape") {
    const command = role === "crawl" ? (await import("./commands/crawl-command.ts")).crawlCommand : (await import("./commands/scrape-command.ts")).scrapeCommand;
    process.exitCode = await command(argv.slice(1), process.env);
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
    config = loadConfig(process.env, embedded ? { mode: "embedded" } : {});
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
