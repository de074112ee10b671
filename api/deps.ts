// The ports the API works with, passed to createApp and to each route module.
import type { Bus, QueueStat } from "../pipeline/runtime/bus.ts";
import type { Clock } from "../pipeline/runtime/clock.ts";
import type { Config } from "../pipeline/runtime/config.ts";
import type { Logger } from "../pipeline/runtime/logger.ts";
import type { Metrics, StoreReplica } from "../pipeline/runtime/metrics.ts";
import type { AuthStore } from "../pipeline/store/auth-store.ts";
import type { CrawlStore } from "../pipeline/store/crawl-store.ts";
import type { ScreenshotStore } from "../pipeline/store/screenshot-store.ts";
import type { WarcArchive } from "../pipeline/store/warc/warc-archive.ts";
import type { SnapshotStore } from "../pipeline/store/snapshot-store.ts";
import type { MonitorStore } from "../pipeline/store/monitor-store.ts";
import type { ScrapeDeps } from "../pipeline/usecases/scrape-page.ts";
import type { LlmClient } from "../pipeline/usecases/crawl-prompt.ts";
import type { TeamAccess } from "../pipeline/usecases/team-access.ts";
import type { MapDeps } from "../pipeline/usecases/map-site.ts";
import type { SearchBackend } from "../pipeline/search/search-backend.ts";

/** `fetcher`, `convert` and `cache` (ScrapeDeps) serve POST /v2/scrape: this process's fetcher and convert pool. */
import type { StatusCache } from "./status-cache.ts";

export interface ApiDeps extends ScrapeDeps {
  config: Config;
  store: CrawlStore;
  bus: Bus;
  clock: Clock;
  log: Logger;
  /** Readiness of the dependencies (store reachable, bus connected). */
  ready: () => Promise<boolean>;
  /** Cluster mode: each ClickHouse server and its state (/health names the ones that are not up). */
  storeReplicas?: () => StoreReplica[];
  /** The chat-completions model when one is configured (crawl prompts, params-preview). */
  llm?: LlmClient;
  /** Keys, credits and rate limits of teams (USE_DB_AUTHENTICATION=true); absent: every caller is the team "bypass". */
  access?: TeamAccess;
  /** Teams and keys, for the admin key routes (whether authentication is on or not, so keys can be made first). */
  authStore?: AuthStore;
  /** Served at /metrics (Prometheus text format). */
  metrics?: Metrics;
  /** robots.txt rules for POST /v2/map (a cache over this process's fetcher). */
  robots: MapDeps["robots"];
  /** Where POST /v2/search gets its results. */
  searchBackend: SearchBackend;
  /** For the queue admin UI, /v2/team/queue-status and /v2/concurrency-check. */
  queueStats?: () => Promise<QueueStat[]>;
  /** GET status answers shared for STATUS_CACHE_MS (absent: every read goes to the store) */
  statusCache?: StatusCache;
  /** web archives of jobs run with `warc: true`, served under /v2/crawl/:id/warc and /cdxj (absent: none) */
  warc?: WarcArchive;
  /** SCREENSHOTS=url: stored screenshots, served at /v2/screenshots/:job/:file (absent: data URLs) */
  screenshots?: ScreenshotStore;
  /** change tracking's page history (removed pages of a crawl, and POST /v2/scrape's comparisons) */
  snapshots?: SnapshotStore;
  /** monitors (scheduled recrawls) and their checks (absent: the /v2/monitor routes answer 503) */
  monitors?: MonitorStore;
}
