// The wiring of each role: which processors it runs and with which ports. start.ts calls the ones asked for.
import { createServer, type Server } from "node:http";
import type { WebSocketServer } from "ws";
import { createApp } from "../api/app.ts";
import { ApiEventsProcessor, EventHub } from "../api/event-hub.ts";
import { listenApi } from "../api/listen.ts";
import { StatusCache } from "../api/status-cache.ts";
import { attachWatch } from "../api/ws.ts";
import { ConvertProcessor } from "../pipeline/convert/convert.ts";
import { pageConverter } from "../pipeline/convert/converter.ts";
import type { ConvertPool } from "../pipeline/convert/worker-pool.ts";
import type { PageAnalyzer } from "../pipeline/convert/document.ts";
import { ExtractJsonProcessor } from "../pipeline/extract-json/extract-json.ts";
import type { Providers } from "../pipeline/extract-json/providers.ts";
import { FetchRenderProcessor } from "../pipeline/fetch-render/fetch-render.ts";
import { changeLogger, LOAD_REASONS, LoadGuard, loadSource, systemSampler, type LoadReason, type LoadState } from "../pipeline/fetch-render/load-guard.ts";
import { OwnServers, serverEndpoints } from "../pipeline/fetch-render/own-servers.ts";
import { readCgroup } from "../pipeline/fetch-render/cgroup.ts";
import { Politeness } from "../pipeline/fetch-render/politeness.ts";
import { HostLimits } from "../pipeline/fetch-render/host-limit.ts";
import type { PolitenessScope } from "../pipeline/url/politeness-key.ts";
import { RobotsCache } from "../pipeline/fetch-render/robots.ts";
import { WarcTap } from "../pipeline/fetch-render/warc-tap.ts";
import { IndexBackend } from "../pipeline/search/index-backend.ts";
import { SearxngBackend } from "../pipeline/search/searxng-backend.ts";
import { FrontierProcessor } from "../pipeline/frontier/frontier.ts";
import { reissueCheckMs } from "../pipeline/frontier/reissue.ts";
import { keys } from "../pipeline/topology.ts";
import { AdmissionProcessor } from "../pipeline/admission/admission.ts";
import { TeamLimits } from "../pipeline/usecases/team-limits.ts";
import type { Clock } from "../pipeline/runtime/clock.ts";
import { ConfigError, type Config } from "../pipeline/runtime/config.ts";
import { RETENTION_MS } from "../pipeline/runtime/constants.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { Metrics } from "../pipeline/runtime/metrics.ts";
import type { RunnerHandle } from "../pipeline/runtime/runner.ts";
import { SinkProcessor } from "../pipeline/sink/sink.ts";
import { CancelCache } from "../pipeline/store/cancel-cache.ts";
import { ledgerRows } from "../pipeline/usecases/credits.ts";
import { ExtractJobProcessor } from "../pipeline/usecases/extract-job-processor.ts";
import { TeamAccess } from "../pipeline/usecases/team-access.ts";
import { WebhookDeliverer, WebhookParked, WebhookRetrier } from "../pipeline/webhook-emit/deliverer.ts";
import { EndpointBreaker } from "../pipeline/webhook-emit/endpoint-breaker.ts";
import { EndpointSlots } from "../pipeline/webhook-emit/endpoints.ts";
import { retryDelay } from "../pipeline/webhook-emit/payload.ts";
import { WebhookEmitter } from "../pipeline/webhook-emit/emitter.ts";
import type { Infrastructure } from "./infrastructure.ts";
import { copyPending } from "../pipeline/store/warc/warc-uploader.ts";
import { startWarcUpload } from "./warc-upload.ts";
import { pageFetcher, pageRenderer, webhookAgent } from "./ports.ts";
import type { Renderer } from "../pipeline/browser/renderer.ts";
import type { RenderMode } from "../pipeline/browser/needs-render.ts";
import { RenderProcessor } from "../pipeline/render/render.ts";
import { MonitorScheduler } from "../pipeline/usecases/monitor-scheduler.ts";

/** What the roles of one process share while they are wired, and what they leave to stop. */
export interface Wiring {
  config: Config;
  log: Logger;
  clock: Clock;
  infra: Infrastructure;
  /** This process's metrics, served at /metrics; every processor records into it. */
  metrics: Metrics;
  /** One convert pool per process, shared by the convert stage and POST /v2/scrape (null: convert in-line). */
  pool: ConvertPool | null;
  /** The page analyzer when pages convert in-line (the pool's workers load theirs by URL): the rules provider's json */
  analyze?: PageAnalyzer;
  /** json / summary: the provider EXTRACT_PROVIDER chose, and the model when one is configured */
  providers: Providers;
  runners: RunnerHandle[];
  /** Run first when the process stops, before the consume loops drain (e.g. wake what waits for a due time). */
  beforeStop: (() => void)[];
  closers: (() => Promise<void>)[];
  /** One Chromium per process (the render role and POST /v2/scrape), made when first asked for. */
  renderer?: Renderer;
}

/** The process's renderer; RENDER=never: none. Says once, clearly, when Chromium is missing. */
export function processRenderer(w: Wiring): Renderer | undefined {
  if (w.config.render === "never") return undefined;
  if (!w.renderer) {
    const renderer = pageRenderer(w.config, w.log, w.metrics);
    w.renderer = renderer;
    w.closers.push(() => renderer.close());
    const status = renderer.status();
    if (status.available) w.log.info({ chromium: status.executablePath, render: w.config.render, renderConcurrency: w.config.renderConcurrency }, "renderer: headless Chromium");
    else w.log.warn({ render: w.config.render, reason: status.reason }, "renderer: NO BROWSER — requests that need one (waitFor, actions, screenshot, branding, mobile) are refused, and RENDER=auto keeps the static HTML of script-built pages (with a warning)");
  }
  return w.renderer;
}

const LOAD_MESSAGES: Record<LoadReason, string> = {
  none: "load guard: back to the stage's concurrency",
  neighbours: "load guard: other processes keep the CPU busy: fewer pages at once (Trawl keeps its share, and at least LOAD_GUARD_MIN_CONCURRENCY)",
  max_cpu: "load guard: CPU above MAX_CPU: fewer pages at once (at least LOAD_GUARD_MIN_CONCURRENCY)",
  memory: "load guard: memory above MAX_RAM: no new page until it drops",
};

/**
 * The load guard of a stage (docs/operations.md): how many pages it runs at once, from LOAD_GUARD_MIN_CONCURRENCY to
 * `ceiling`, adapted to the load every second; Trawl's own servers on this machine are not counted as others' load.
 */
const loadGuard = ({ config, log, metrics }: Wiring, stage: "fetch-render" | "render", ceiling: number) => {
  const cgroup = readCgroup();
  const source = loadSource(cgroup);
  // embedded mode uses no server: a Kafka or ClickHouse on the configured ports is someone else's
  const own = new OwnServers({
    endpoints: config.mode === "cluster" ? serverEndpoints(config) : [], chromiumPath: config.chromiumPath, sameCgroup: source.cpu === "cgroup",
    onFound: (servers) => log.info({ stage, servers }, "load guard: Trawl's own servers on this machine (their CPU is not a neighbour's)"),
  });
  const floor = Math.min(config.loadGuardMinConcurrency, ceiling);
  log.info({ stage, loadSource: source, cpuLimitCores: cgroup?.cpuLimitCores ?? null, memoryLimitBytes: cgroup?.memoryLimitBytes ?? null, floor, ceiling }, "load guard: MAX_CPU/MAX_RAM measure this load");
  const show = (s: LoadState) => {
    metrics.loadGuardLimit.set({ stage }, s.limit);
    for (const reason of LOAD_REASONS) metrics.loadGuardReason.set({ stage, reason }, reason === s.reason ? 1 : 0);
  };
  show({ limit: ceiling, reason: "none" });
  const share = (x: number | undefined) => +(x ?? 0).toFixed(2);
  const level = changeLogger();
  return new LoadGuard({
    limits: { floor, ceiling, maxCpu: config.maxCpu, maxRam: config.maxRam },
    sample: systemSampler(cgroup, undefined, () => own.cpuSecondsSince()),
    onChange: (c) => {
      show(c);
      const { sample: s } = c;
      const fields = { stage, reason: c.reason, limit: c.limit, from: c.previous.limit, floor, ceiling, cpu: share(s.cpu), trawlCpu: share(s.own), ownServersCpu: share(s.servers), ram: share(s.ram), maxCpu: config.maxCpu ?? "auto", maxRam: config.maxRam, source };
      // the log says each change of reason once; the limit's steps within one, and flaps, are at debug level (and in /metrics)
      log[level(c)](fields, c.reason === c.previous.reason ? "load guard: limit" : LOAD_MESSAGES[c.reason]);
    },
  });
};

const cacheDeps = (w: Wiring) => ({ cache: w.infra.cache, cacheMaxAgeMs: w.config.cacheMaxAgeMs, now: () => w.clock.now(), log: w.log });

/**
 * Retention: results are served for 24 h after a crawl ended, then deleted with their screenshots (and single
 * scrapes past the retention); expiring crawls' credits go to the ledger first, so that a team's usage outlives them.
 */
export async function sweepExpired(w: Wiring, now: number): Promise<string[]> {
  const { infra } = w;
  const ids = await infra.store.deleteExpired(now, RETENTION_MS, (crawls) => infra.auth.recordUsage(ledgerRows(crawls)));
  await infra.screenshots.deleteExpired(ids, now - RETENTION_MS);
  // web archives: WARC_RETENTION_HOURS after their last record, unless their job still runs
  // torn tails of files no writer extends any more (a killed fetch-render or render replica), then expired archives
  const cut = await infra.warc.repair(now - 5 * 60_000);
  if (cut.length) w.log.warn({ files: cut }, "web archives: torn tails cut (a kill during a write); their pages are written again");
  // with WARC_S3_URL, a job's archives are kept until they are copied (nothing is lost while the bucket is unreachable)
  const keep = async (id: string) => (await infra.store.getCrawl(id))?.status === "scraping" || (w.config.warcS3Url !== "" && (await copyPending(infra.warc, id)));
  const gone = await infra.warc.deleteExpired(now - w.config.warcRetentionHours * 3_600_000, keep);
  if (gone.length) w.log.info({ jobs: gone.length }, "expired web archives deleted");
  return ids;
}

export async function startFrontier(w: Wiring): Promise<void> {
  const { infra, clock, log, config } = w;
  const frontier = new FrontierProcessor({ store: infra.store, clock, log, metrics: w.metrics, limits: config, snapshots: infra.snapshots, urlLogMax: config.crawlUrlLogMax });
  w.runners.push(await infra.run(frontier));
  // lost work is sent again: a crawl stalled past its bound gets ResumeRequested, handled in order with its events
  const reissue = setInterval(() => {
    const due = frontier.dueForReissue(clock.now());
    if (due.length === 0) return;
    infra.bus.produce(due.map((crawlId) => ({ topic: "frontier.inbox" as const, key: keys.crawl(crawlId), value: { type: "ResumeRequested", crawlId } })))
      .catch((err) => log.warn({ err: (err as Error).message, crawls: due.length }, "reissue request not produced; will retry"));
  }, reissueCheckMs(config));
  reissue.unref();
  w.beforeStop.push(() => clearInterval(reissue));
  // running crawls no frontier has in memory (forgotten by a restart, their messages lost) are looked up in the store,
  // less often (a read per crawl not in memory), and resumed the same way
  let orphanScan: Promise<void> | undefined;
  const orphans = setInterval(() => {
    orphanScan ??= frontier.orphansForReissue(clock.now())
      .then((due) => (due.length ? infra.bus.produce(due.map((crawlId) => ({ topic: "frontier.inbox" as const, key: keys.crawl(crawlId), value: { type: "ResumeRequested", crawlId } }))) : undefined))
      .catch((err: unknown) => log.warn({ err: (err as Error).message }, "looking for forgotten running crawls failed; will retry"))
      .finally(() => (orphanScan = undefined));
  }, 4 * reissueCheckMs(config));
  orphans.unref();
  w.beforeStop.push(() => clearInterval(orphans));
  // the per-team concurrency limit: a team's own setting, else TEAM_MAX_CONCURRENCY (also for the anonymous team)
  const limits = new TeamLimits(infra.auth, config.teamMaxConcurrency, config.authCacheTtlMs, clock.now);
  w.runners.push(await infra.run(new AdmissionProcessor({ store: infra.store, clock, log, limitOf: (teamId) => limits.of(teamId) })));
  // retention: results are served for 24 h after a crawl ended, then deleted (their credits go to the ledger first)
  const sweep = setInterval(() => {
    sweepExpired(w, clock.now()).then(
      (ids) => ids.length && log.info({ crawls: ids.length }, "expired crawls deleted"),
      (err) => log.warn({ err: (err as Error).message }, "retention sweep failed; will retry"),
    );
    infra.cache.deleteBefore(clock.now() - config.cacheMaxAgeMs).catch((err) => log.warn({ err: (err as Error).message }, "page cache sweep failed; will retry"));
  }, config.retentionSweepMs);
  sweep.unref();
  w.closers.push(async () => clearInterval(sweep));
  startWarcUpload(w);
}

export async function startFetchRender(w: Wiring): Promise<void> {
  const { infra, clock, log, config } = w;
  const fetcher = pageFetcher(config);
  w.closers.push(() => fetcher.close());
  const stopping = new AbortController(); // tasks waiting for their host's turn are left for the restart
  w.beforeStop.push(() => stopping.abort());
  const robots = new RobotsCache({ fetcher, ttlMs: config.robotsCacheTtlMs, timeoutMs: Math.min(config.fetchTimeoutMs, 10_000), now: clock.now });
  const processor = new FetchRenderProcessor({
    fetcher,
    robots,
    warc: new WarcTap(infra.warc, robots, log),
    politeness: new Politeness(clock.now),
    // a task of a crawl that ended (delivered again after a crash) is dropped: nothing fetched or archived for it
    cancels: new CancelCache(infra.store, 1000, clock.now, "ended"),
    log,
    defaultTimeoutMs: config.fetchTimeoutMs,
    retries: config.fetchRetries,
    retryAfterMaxMs: config.retryAfterMaxMs,
    robotsUserAgent: config.robotsUserAgent,
    hosts: new HostLimits({ initial: config.hostMaxConcurrency, ceiling: config.hostMaxConcurrencyCeiling }, clock.now, (host, from, to, why) => {
      if (why === "strain") log.info({ host, from, to }, "host strained (429, 503, time-out or connection error): fewer fetches at once");
      else log.debug({ host, from, to, why }, "host concurrency");
    }),
    hostDelayMs: config.hostDelayMs,
    maxSitemaps: config.maxSitemaps,
    sitemapMaxBytes: config.sitemapMaxBytes,
    cache: infra.cache,
    cacheMaxAgeMs: config.cacheMaxAgeMs,
    now: () => clock.now(),
    renderMode: config.render as RenderMode,
    metrics: w.metrics,
    load: loadGuard(w, "fetch-render", config.fetchConcurrency),
    snapshots: infra.snapshots,
    politenessScope: config.politenessScope as PolitenessScope,
    hostWaitMaxMs: config.hostWaitMaxMs,
    stopping: stopping.signal,
  }, config.fetchTasksHeld);
  w.runners.push(await infra.run(processor));
}

/** The render role: render.tasks through headless Chromium. In cluster mode it refuses to start without a browser. */
export async function startRender(w: Wiring, alone: boolean): Promise<void> {
  const { infra, clock, log, config } = w;
  const renderer = processRenderer(w) ?? pageRenderer(config, log, w.metrics);
  if (alone && !renderer.status().available) throw new ConfigError(`config: the render role needs Chromium: ${renderer.status().reason}`);
  w.runners.push(await infra.run(new RenderProcessor({
    renderer, cancels: new CancelCache(infra.store, 1000, clock.now, "ended"), log, defaultTimeoutMs: config.fetchTimeoutMs, load: loadGuard(w, "render", config.renderConcurrency),
    ...(config.screenshots === "url" ? { screenshots: infra.screenshots } : {}), now: () => clock.now(), warc: infra.warc,
  }, config.renderConcurrency)));
}

export async function startConvert(w: Wiring): Promise<void> {
  w.runners.push(await w.infra.run(new ConvertProcessor(w.pool, w.config.convertWorkers, w.metrics, w.analyze)));
}

export async function startExtractJson(w: Wiring): Promise<void> {
  w.log.info({ provider: w.providers.provider.name }, "extract-json: json and summary formats");
  w.runners.push(await w.infra.run(new ExtractJsonProcessor({ provider: w.providers.provider, log: w.log, concurrency: w.config.extractConcurrency })));
}

export async function startSink(w: Wiring): Promise<void> {
  const { infra, clock, log } = w;
  w.runners.push(await infra.run(new SinkProcessor({ store: infra.store, cancels: new CancelCache(infra.store, 0, clock.now), clock, log, metrics: w.metrics, snapshots: infra.snapshots, eventDocument: w.config.crawlEventsDocument })));
}

export async function startWebhookEmit(w: Wiring): Promise<void> {
  const { infra, clock, log, config } = w;
  if (!config.webhookSecret) log.warn("SELF_HOSTED_WEBHOOK_HMAC_SECRET is empty: webhooks are sent without a signature");
  const agent = webhookAgent(config);
  w.closers.push(() => agent.close());
  w.runners.push(await infra.run(new WebhookEmitter({ store: infra.store, clock, log, secret: config.webhookSecret })));
  // one breaker and one set of endpoint slots for the three consumers: an endpoint's limits hold across them
  const stopping = new AbortController();
  w.beforeStop.push(() => stopping.abort());
  const delivery = {
    agent, store: infra.store, clock, log, allowLocal: config.allowLocalWebhooks, timeoutMs: config.webhookTimeoutMs,
    maxAttempts: config.webhookMaxAttempts, retryDelaysMs: config.webhookRetryDelaysMs, metrics: w.metrics,
    breaker: new EndpointBreaker(retryDelay(config.webhookRetryDelaysMs, 1)), slots: new EndpointSlots(config.webhookEndpointConcurrency),
    stopping: stopping.signal,
  };
  w.runners.push(await infra.run(new WebhookDeliverer(delivery)));
  w.runners.push(await infra.run(new WebhookParked(delivery)));
  w.runners.push(await infra.run(new WebhookRetrier(delivery)));
}

/** The HTTP and WebSocket API, listening on HOST:PORT. */
export async function startApi(w: Wiring): Promise<{ server: Server; wss: WebSocketServer; closeListeners: () => Promise<void> }> {
  const { infra, clock, log, config } = w;
  const hub = new EventHub();
  const statusCache = new StatusCache(config.statusCacheMs, () => clock.now());
  hub.onEvent((e) => {
    if (e.type !== "crawl.page" && e.type !== "crawl.started") statusCache.invalidate(e.crawlId); // it ended: no stale "scraping"
  });
  w.runners.push(await infra.run(new ApiEventsProcessor(hub, infra.store)));
  const access = config.useDbAuthentication ? new TeamAccess({
    store: infra.store, auth: infra.auth, cacheTtlMs: config.authCacheTtlMs, now: () => clock.now(),
    hashConcurrency: config.authHashConcurrency, failureLimit: config.authFailureLimit, failureWindowMs: config.authFailureWindowMs,
    budgetPerPage: config.creditBudgetPerPage,
  }) : undefined;
  if (access) log.info({ cacheTtlMs: config.authCacheTtlMs }, "authentication on: every /v2 request needs a team's API key");
  else log.warn("USE_DB_AUTHENTICATION is false: authentication is bypassed, every request is accepted");
  const fetcher = pageFetcher(config);
  w.closers.push(() => fetcher.close());
  const robots = new RobotsCache({ fetcher, ttlMs: config.robotsCacheTtlMs, timeoutMs: Math.min(config.fetchTimeoutMs, 10_000), now: clock.now });
  const searchBackend = config.searxngEndpoint
    ? new SearxngBackend({ endpoint: config.searxngEndpoint, engines: config.searxngEngines, categories: config.searxngCategories })
    : new IndexBackend(infra.store, clock.now);
  const scrape = {
    store: infra.store, bus: infra.bus, clock, log, fetcher, convert: pageConverter(w.pool, w.analyze), extractor: w.providers.provider, cache: cacheDeps(w),
    renderer: processRenderer(w), renderMode: config.render as RenderMode, snapshots: infra.snapshots,
  };
  // POST /v2/extract jobs run here, shared by the API replicas through the extract-jobs consumer group
  const jobs = new ExtractJobProcessor({ ...scrape, allowPrivate: config.allowPrivateCrawlTargets, fetchTimeoutMs: config.fetchTimeoutMs, authStore: infra.auth });
  w.beforeStop.push(() => jobs.prepareStop());
  w.runners.push(await infra.run(jobs));
  const app = createApp({
    ...scrape, config, ready: () => infra.ready(), ...(infra.storeReplicas ? { storeReplicas: infra.storeReplicas } : {}), ...(w.providers.llm ? { llm: w.providers.llm } : {}),
    queueStats: () => infra.queueStats(), metrics: w.metrics, authStore: infra.auth, ...(access ? { access } : {}), robots, searchBackend,
    ...(config.screenshots === "url" ? { screenshots: infra.screenshots } : {}), statusCache, monitors: infra.monitors,
    warc: infra.warc,
  });
  // monitors: every API replica polls for due ticks; a tick's check id is fixed, so its job starts once
  const scheduler = new MonitorScheduler({
    store: infra.store, bus: infra.bus, clock, log, monitors: infra.monitors, config, ...(access ? { admit: (team, n, limit, budget) => access.admit(team, n, limit, budget) } : {}),
  });
  scheduler.start(config.monitorPollMs);
  // stopped with the consume loops, before the bus and store close (as a closer it polled on while they closed: a tick
  // fired then could not be queued, its crawl was marked failed, and the next start wrote the tick's check for it)
  w.runners.push({ stop: () => scheduler.stop() });
  const server = createServer(app.callback());
  const sockets = process.platform === "linux" ? config.apiAcceptSockets : 1;
  const closeListeners = await listenApi(server, { port: config.port, host: config.host, sockets });
  const wss = attachWatch(server, { store: infra.store, hub, clock, log, trustProxy: config.trustProxy, ...(access ? { access } : {}) });
  log.info({ address: server.address(), sockets }, "api listening");
  return { server, wss, closeListeners };
}
