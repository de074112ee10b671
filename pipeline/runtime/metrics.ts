// The Prometheus metrics of one process (prom-client, its own registry: never the library's global one). Created by
// the composition root and passed to each processor that records something; served at /metrics.
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { QueueStat } from "./bus.ts";
import { deadLetterCounts } from "./dead-letters.ts";

/** One ClickHouse server of CLICKHOUSE_URL as the store's client sees it (pipeline/store/replica-heal.ts). */
export interface StoreReplica {
  url: string;
  state: string;
  delayS?: number;
}

/**
 * The body of /health: `ok`, or `degraded` naming each ClickHouse server that is not up (away, lacking Trawl's schema
 * and being healed, or catching up after a heal). Still HTTP 200: the process lives and routes around the server.
 */
export function healthBody(replicas: StoreReplica[] | undefined): { status: string; reason?: string; store?: { replicas: StoreReplica[] } } {
  const notUp = (replicas ?? []).filter((r) => r.state !== "up");
  if (notUp.length === 0) return { status: "ok" };
  return { status: "degraded", reason: `ClickHouse ${notUp.map((r) => `${r.url} is ${r.state}`).join(", ")}`, store: { replicas: replicas ?? [] } };
}

export class Metrics {
  readonly registry = new Registry();
  /** fetch-render: pages by outcome (`ok` or the error code) */
  readonly pagesFetched: Counter<"outcome">;
  readonly fetchSeconds: Histogram<"outcome">;
  readonly fetchBytes: Histogram;
  /** convert: pages by outcome */
  readonly pagesConverted: Counter<"outcome">;
  /** sink: documents by outcome (`stored`, `duplicate`, `cancelled`) */
  readonly pagesStored: Counter<"outcome">;
  /** webhook-emit: delivery attempts by result (`ok`, `retry`, `failed`) */
  readonly webhookAttempts: Counter<"result">;
  /** frontier: crawls started and ended by final status; credits charged to ended crawls */
  readonly crawlsStarted: Counter;
  readonly crawlsEnded: Counter<"status">;
  readonly creditsUsed: Counter;
  /** render (and the API's scrapes): the browser pool */
  readonly renderPoolSize: Gauge;
  readonly renderInUse: Gauge;
  readonly renderSeconds: Histogram<"outcome">;
  readonly browserRestarts: Counter;
  /** requests of rendered pages refused, by reason (`ad` for blockAds, `private`, `other`) */
  readonly renderRefused: Counter<"reason">;
  /** the load guard, per stage (fetch-render, render): pages it runs at once now, and why fewer than its concurrency */
  readonly loadGuardLimit: Gauge<"stage">;
  readonly loadGuardReason: Gauge<"stage" | "reason">;

  /**
   * queueStats: read at every scrape for trawl_consumer_lag (absent: no lag gauge). runningCrawls: read at every
   * scrape for trawl_crawls_running (the frontier's process gives it; absent: no such gauge).
   */
  constructor(opts: { role: string; queueStats?: () => Promise<QueueStat[]>; runningCrawls?: () => Promise<number>; storeReplicas?: () => StoreReplica[] }) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ role: opts.role });
    collectDefaultMetrics({ register: this.registry });
    this.pagesFetched = new Counter({ name: "trawl_pages_fetched_total", help: "Pages fetched, by outcome (ok or error code)", labelNames: ["outcome"], registers });
    this.fetchSeconds = new Histogram({ name: "trawl_fetch_duration_seconds", help: "Time to fetch one page (retries and politeness waits included)", labelNames: ["outcome"], buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers });
    this.fetchBytes = new Histogram({ name: "trawl_fetch_bytes", help: "Body size of fetched pages", buckets: [1e3, 1e4, 5e4, 1e5, 5e5, 1e6, 5e6, 1e7], registers });
    this.pagesConverted = new Counter({ name: "trawl_pages_converted_total", help: "Pages converted, by outcome (ok or error code)", labelNames: ["outcome"], registers });
    this.pagesStored = new Counter({ name: "trawl_pages_stored_total", help: "Documents handled by the sink, by outcome (stored, duplicate, cancelled)", labelNames: ["outcome"], registers });
    this.webhookAttempts = new Counter({ name: "trawl_webhook_attempts_total", help: "Webhook delivery attempts, by result (ok, retry, failed)", labelNames: ["result"], registers });
    this.crawlsStarted = new Counter({ name: "trawl_crawls_started_total", help: "Crawls started", registers });
    this.crawlsEnded = new Counter({ name: "trawl_crawls_ended_total", help: "Crawls ended, by final status", labelNames: ["status"], registers });
    this.creditsUsed = new Counter({ name: "trawl_credits_used_total", help: "Credits used by ended crawls", registers });
    this.renderPoolSize = new Gauge({ name: "trawl_render_pool_size", help: "Browser pages this process renders at once at most (RENDER_CONCURRENCY)", registers });
    this.renderInUse = new Gauge({ name: "trawl_render_pages_in_use", help: "Browser pages rendering now", registers });
    this.renderSeconds = new Histogram({ name: "trawl_render_duration_seconds", help: "Time to render one page in the browser (a retry after a crash included), by outcome (ok or error code)", labelNames: ["outcome"], buckets: [0.25, 0.5, 1, 2, 5, 10, 20, 30, 60], registers });
    this.browserRestarts = new Counter({ name: "trawl_browser_restarts_total", help: "Browsers started to replace one that crashed, hung or exited", registers });
    this.renderRefused = new Counter({ name: "trawl_render_refused_requests_total", help: "Requests of rendered pages refused, by reason (ad: blockAds; private: private address; other)", labelNames: ["reason"], registers });
    this.loadGuardLimit = new Gauge({ name: "trawl_load_guard_limit", help: "Pages a worker lets run at once now (the load guard: between LOAD_GUARD_MIN_CONCURRENCY and the stage's concurrency; 0 while memory is over MAX_RAM), by stage", labelNames: ["stage"], registers });
    this.loadGuardReason = new Gauge({ name: "trawl_load_guard_reason", help: "Why the load guard runs fewer pages than the stage's concurrency: 1 for the current reason (none, neighbours, max_cpu, memory), 0 for the others, by stage", labelNames: ["stage", "reason"], registers });
    const collectFailures = new Counter({ name: "trawl_metrics_collect_failures_total", help: "Scrapes of /metrics that could not read a gauge (the store or Kafka was away), by metric", labelNames: ["metric"], registers: [] });
    new Gauge({
      name: "trawl_dead_letters_total", help: "Messages this process dead-lettered (what retrying can never fix), by topic and error code", labelNames: ["topic", "code"], registers,
      collect() {
        for (const c of deadLetterCounts()) this.set({ topic: c.topic, code: c.code }, c.count);
      },
    });
    const { storeReplicas } = opts;
    if (storeReplicas) {
      const states = ["up", "away", "missing-schema", "catching-up"];
      new Gauge({
        name: "trawl_clickhouse_replica_state", help: "Each ClickHouse server of CLICKHOUSE_URL: 1 for its state now (up, away, missing-schema: being healed, catching-up: healed, fetching from the others)",
        labelNames: ["replica", "state"], registers,
        collect() {
          for (const r of storeReplicas()) for (const s of states) this.set({ replica: r.url, state: s }, r.state === s ? 1 : 0);
        },
      });
      new Gauge({
        name: "trawl_clickhouse_replication_delay_seconds", help: "Largest replication delay of Trawl's tables on each ClickHouse replica (system.replicas absolute_delay; cluster only)",
        labelNames: ["replica"], registers,
        collect() {
          this.reset();
          for (const r of storeReplicas()) if (r.delayS !== undefined) this.set({ replica: r.url }, r.delayS);
        },
      });
    }
    const { runningCrawls } = opts;
    if (runningCrawls) {
      new Gauge({
        name: "trawl_crawls_running", help: "Crawls running now (not ended, not cancelled), of every team", registers,
        async collect() {
          try {
            this.set(await runningCrawls());
          } catch {
            collectFailures.inc({ metric: "trawl_crawls_running" }); // the store is away: keep the last value
          }
        },
      });
    }
    const queueStats = opts.queueStats;
    if (queueStats) {
      new Gauge({
        name: "trawl_consumer_lag", help: "Messages not yet committed by a consumer group, per topic and partition",
        labelNames: ["topic", "group", "partition"], registers,
        async collect() {
          this.reset();
          let stats: QueueStat[];
          try {
            stats = await queueStats();
          } catch {
            // e.g. Kafka "not the leader" for a topic created a moment ago: this scrape has no lag series, the rest
            // of /metrics is still served (a throwing collect would turn the whole scrape into a 500)
            collectFailures.inc({ metric: "trawl_consumer_lag" });
            return;
          }
          for (const q of stats) {
            for (const p of q.partitions ?? [{ partition: -1, lag: q.lag }]) this.set({ topic: q.topic, group: q.group, partition: String(p.partition) }, p.lag);
          }
        },
      });
    }
    this.registry.registerMetric(collectFailures); // prom-client reads every metric at once: a failure shows from the next scrape on
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
