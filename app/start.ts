// start(roles, config, log): runs the given roles in this process on the infrastructure of config.mode, until stop().
// Used by `trawl <role>` (main.ts), `trawl crawl` and the tests.
import type { Server } from "node:http";
import type { WebSocketServer } from "ws";
import { ConvertPool } from "../pipeline/convert/worker-pool.ts";
import { parseHtml } from "../pipeline/convert/parse-html.ts";
import { chooseProviders } from "../pipeline/extract-json/providers.ts";
import { analyze as rulesAnalyze } from "../pipeline/extract-json/rules-analyzer.ts";
import type { Bus } from "../pipeline/runtime/bus.ts";
import { systemClock, type Clock } from "../pipeline/runtime/clock.ts";
import { ConfigError, type Config } from "../pipeline/runtime/config.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import { Metrics } from "../pipeline/runtime/metrics.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import { checkAdminKey, isLoopbackHost } from "../api/admin-key.ts";
import { parseCorsOrigins } from "../api/cors.ts";
import { keys, roles, type Role } from "../pipeline/topology.ts";
import { openInfrastructure } from "./infrastructure.ts";
import { compileAll } from "../schemas/index.ts";
import { lowerThreads } from "../pipeline/runtime/thread-priority.ts";
import { collectGarbage, setHeapGrowth } from "../pipeline/runtime/heap-growth.ts";
import { setV8EfficiencyMode } from "../pipeline/runtime/v8-tiering.ts";
import { startMetricsServer } from "./metrics-server.ts";
import type { ScreenshotStore } from "../pipeline/store/screenshot-store.ts";
import { startApi, startConvert, startExtractJson, startFetchRender, startFrontier, startRender, startSink, startWebhookEmit, sweepExpired, type Wiring } from "./roles.ts";

/** The rules provider's page analyzer: by URL for the convert workers, as a function when pages convert in-line. */
const RULES_ANALYZER = { url: new URL("../pipeline/extract-json/rules-analyzer.ts", import.meta.url).href, analyze: rulesAnalyze };

/** Every role, in start order (declared in pipeline/topology.ts). */
export const ROLES = Object.keys(roles) as readonly Role[];
export type RoleName = Role;

export interface Running {
  config: Config;
  log: Logger;
  store: CrawlStore;
  bus: Bus;
  clock: Clock;
  /** The API server when the api role runs. */
  server?: Server;
  /** This process's metrics (served at /metrics on the API's port, or on METRICS_PORT without the api role). */
  metrics: Metrics;
  /** The METRICS_PORT server, when one runs. */
  metricsServer?: Server;
  /** The retention sweep the frontier role runs every RETENTION_SWEEP_MS, at a given time (tests). */
  sweepExpired(now: number): Promise<string[]>;
  /** Stored screenshots (SCREENSHOTS=url). */
  screenshots: ScreenshotStore;
  stop(): Promise<void>;
}

/** Settings that are valid one by one but not together; refused before anything starts. */
function checkSettings(roles: readonly RoleName[], config: Config): void {
  const loopback = isLoopbackHost(config.host);
  if (roles.includes("api")) {
    checkAdminKey(config.host, config.adminKey);
    parseCorsOrigins(config.corsAllowedOrigins);
  }
  if (roles.includes("api") && !config.useDbAuthentication && !loopback && !config.allowUnauthenticatedPublicHost) {
    throw new ConfigError(`config: HOST=${config.host} is not a loopback address while USE_DB_AUTHENTICATION=false: anyone who reaches the port could read and cancel every crawl. Set USE_DB_AUTHENTICATION=true (and create keys with npx trawl keys create), or ALLOW_UNAUTHENTICATED_PUBLIC_HOST=true to accept that`);
  }
}

/** Starts the given roles in this process. `clock`: the time every role reads (tests move it forward). */
export async function start(roles: readonly RoleName[], config: Config, log: Logger, clock: Clock = systemClock): Promise<Running> {
  checkSettings(roles, config);
  setHeapGrowth(config.heapGrowthPercent);
  const tiering = setV8EfficiencyMode(config.v8EfficiencyMode, { cpuS: config.v8EfficiencyCpuS, log });
  compileAll();
  lowerThreads();
  const roleName = roles.length === ROLES.length ? "all" : roles.join("+");
  const infra = await openInfrastructure(config, log, clock, roleName);
  const metrics = new Metrics({
    role: roleName, queueStats: () => infra.queueStats(), ...(infra.storeReplicas ? { storeReplicas: infra.storeReplicas } : {}),
    ...(roles.includes("frontier") ? { runningCrawls: async () => (await infra.store.runningCrawlIds()).length } : {}),
  });
  const needsPool = (roles.includes("convert") || roles.includes("api")) && config.convertWorkers > 0;
  const providers = chooseProviders(config, parseHtml, log);
  // with the rules provider, the json format's extraction runs in the convert workers on the tree they parsed anyway
  const analyzer = providers.provider.name === "rules" ? RULES_ANALYZER : undefined;
  // without the convert role (an API process) the pool serves only /v2/scrape and extract jobs: workers start on first use
  const lazy = !roles.includes("convert");
  const pool = needsPool ? new ConvertPool({ size: config.convertWorkers, timeoutMs: config.convertTimeoutMs, heapMb: config.convertWorkerHeapMb, lazy, ...(analyzer ? { analyzer: analyzer.url } : {}) }) : null;
  const w: Wiring = { config, log, clock, infra, metrics, pool, ...(analyzer ? { analyze: analyzer.analyze } : {}), providers, runners: [], beforeStop: [], closers: [] };
  if (pool) w.closers.push(() => pool.close());

  if (roles.includes("frontier")) await startFrontier(w);
  if (roles.includes("fetch-render")) await startFetchRender(w);
  if (roles.includes("render") && config.render !== "never") await startRender(w, roles.length === 1);
  if (roles.includes("convert")) await startConvert(w);
  if (roles.includes("extract-json")) await startExtractJson(w);
  if (roles.includes("sink")) await startSink(w);
  if (roles.includes("webhook-emit")) await startWebhookEmit(w);
  // a process that runs stages collects their start-up garbage (parsed lists, compiled schemas and modules) before the
  // API listens, instead of in the first major GC of the first crawl; an API-only process has little of it
  if (roles.some((r) => r !== "api")) log.debug({ ms: Math.round(collectGarbage()) }, "start-up garbage collected");
  const api = roles.includes("api") ? await startApi(w) : undefined;
  const metricsServer = !api && config.metricsPort > 0
    ? await startMetricsServer({ host: config.host, port: config.metricsPort, metrics, ready: () => infra.ready(), log, ...(infra.storeReplicas ? { storeReplicas: infra.storeReplicas } : {}) })
    : undefined;
  infra.started?.();
  if (infra.damaged && roles.includes("frontier")) await resumeCrawls(w);

  let stopped = false;
  return {
    config, log, store: infra.store, bus: infra.bus, clock, metrics, ...(api ? { server: api.server } : {}), ...(metricsServer ? { metricsServer } : {}),
    sweepExpired: (now) => sweepExpired(w, now), screenshots: infra.screenshots,
    async stop() {
      if (stopped) return;
      stopped = true;
      tiering.stop();
      log.info("shutting down: draining in-flight work");
      if (api) await closeApi(api.server, api.wss, api.closeListeners);
      if (metricsServer) await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      for (const prepare of w.beforeStop) prepare();
      await Promise.all(w.runners.map((r) => r.stop()));
      await infra.close();
      for (const close of w.closers) await close();
      log.info("stopped");
    },
  };
}

/** After a crash damaged the embedded logs: every running crawl gets its queued fetch tasks again (the frontier). */
async function resumeCrawls(w: Wiring): Promise<void> {
  const ids = await w.infra.store.runningCrawlIds();
  await w.infra.bus.produce(ids.map((crawlId) => ({ topic: "frontier.inbox" as const, key: keys.crawl(crawlId), value: { type: "ResumeRequested", crawlId } })));
  w.log.warn({ crawls: ids.length }, "running crawls resumed after a crash");
}

/** Stops accepting: WebSocket watchers are told the server is going away, then the HTTP server closes. */
async function closeApi(server: Server, wss: WebSocketServer, closeListeners: () => Promise<void>): Promise<void> {
  await closeListeners();
  for (const client of wss.clients) client.close(1001, JSON.stringify({ type: "error", error: "server shutting down" }));
  wss.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections?.();
}
