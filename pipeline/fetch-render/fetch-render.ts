// fetch-render stage: fetch.tasks -> pages.fetched (or PageFailed), or render.tasks for pages that need a browser
// (RENDER and the rule of pipeline/browser/needs-render.ts). Also runs each crawl's discover task (robots.txt and sitemaps).
import { randomUUID } from "node:crypto";
import type { FetchTask, FrontierInboxMessage, PageFetched, RenderTask } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage, PageError, ROBOTS_BLOCKED, TrawlError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { retry } from "../runtime/retry.ts";
import {keys } from "../topology.ts";
import type { CancelCache } from "../store/cancel-cache.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import { inScope } from "../url/scope.ts";
import type { Fetcher } from "./fetcher.ts";
import { GateWaitAborted, type Politeness } from "./politeness.ts";
import { politenessKey, type PolitenessScope } from "../url/politeness-key.ts";
import type { Answer, HostLimits } from "./host-limit.ts";
import type { RobotsCache } from "./robots.ts";
import type { LoadGuard } from "./load-guard.ts";
import { discoverSitemapUrls, type SitemapWarning } from "./sitemaps.ts";
import { cachedFetch, cacheOnly } from "./cached-fetch.ts";
import type { PageCache } from "../store/page-cache.ts";
import { browserOption, scriptBuilt, type RenderMode } from "../browser/needs-render.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import type { Metrics } from "../runtime/metrics.ts";
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { afterFetch, conditionalHeaders, previousSnapshot } from "../store/page-freshness.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import { WarcTap } from "./warc-tap.ts";

export interface FetchRenderDeps {
  fetcher: Fetcher;
  robots: RobotsCache;
  politeness: Politeness;
  cancels: CancelCache;
  log: Logger;
  defaultTimeoutMs: number;
  retries: number;
  retryAfterMaxMs: number;
  robotsUserAgent: string;
  /** each host's fetches at once: HOST_MAX_CONCURRENCY to start with, adapted to its answers (shared by every crawl) */
  hosts: HostLimits;
  hostDelayMs: number;
  maxSitemaps: number;
  /** SITEMAP_MAX_BYTES: inflated size of one gzipped sitemap */
  sitemapMaxBytes: number;
  /** the load guard: how many pages run at once under load (MAX_CPU, MAX_RAM, LOAD_GUARD_MIN_CONCURRENCY) */
  load?: LoadGuard;
  /** maxAge / storeInCache; absent or cacheMaxAgeMs 0: no page cache */
  cache?: PageCache;
  cacheMaxAgeMs?: number;
  now?: () => number;
  /** RENDER: when pages are handed to the render role (absent: never) */
  renderMode?: RenderMode;
  /** pages fetched by outcome, fetch time and size */
  metrics?: Metrics;
  /** web archives: jobs with `warc` have their requests written as WARC records */
  warc?: WarcTap;
  /** change tracking: the previous snapshot of a page gives the validators of a conditional fetch */
  snapshots?: SnapshotStore;
  /** POLITENESS_SCOPE: what shares one politeness, host (default) or registrable domain; fetch.tasks is keyed by it */
  politenessScope?: PolitenessScope;
  /** HOST_WAIT_MAX_MS: a task that waited this long for its host's turn goes back to the end of fetch.tasks (default 60 s) */
  hostWaitMaxMs?: number;
  /** aborted when the process begins to stop: tasks waiting for their host's turn are left for the restart */
  stopping?: AbortSignal;
}

interface Batch {
  cancelled: Set<string>;
}

/** The reason of a wait given up at a rebalance. */
const REASSIGNED = "partitions reassigned";
/** The reason of a wait given up because the process is stopping. */
const STOPPING = "stopping";
/** The reason of a task not fetched because its crawl was cancelled while it waited for its host's turn. */
const CANCELLED = "crawl cancelled";

/** Longest Crawl-delay honoured (a robots.txt asking for an hour between fetches would hold a crawl for days). */
const MAX_CRAWL_DELAY_MS = 30_000;
/**
 * A sitemap's URLs go to the frontier in messages of at most this many: the frontier handles one message in one go,
 * and in embedded mode on the event loop the API shares, so the PostgreSQL manual's 1,169 URLs in one message held it
 * ~60 ms at the start of a first crawl (status reads behind it), and a sitemap index of 50,000 URLs would for seconds.
 * Between messages the loop lets I/O in (runtime/yield-turn.ts).
 */
export const SITEMAP_LINKS_PER_MESSAGE = 250;

/**
 * What an answer tells of the host's load: 429 and 503 (and time-outs, refused or reset connections) are strain;
 * other 5xx and failures before any connection tell nothing; any other response is a clean answer with its latency.
 */
function answerOf(statusCode: number | undefined, latencyMs: number | undefined, code?: string): Answer {
  if (statusCode === 429 || statusCode === 503 || code === "SCRAPE_TIMEOUT" || code === "SCRAPE_CONNECTION_ERROR") return { kind: "strain" };
  if (statusCode === undefined || statusCode >= 500 || latencyMs === undefined) return { kind: "neutral" };
  return { kind: "ok", latencyMs };
}

const inbox = (crawlId: string, value: FrontierInboxMessage, phase?: number): Emission => ({ topic: "frontier.inbox", key: keys.crawl(crawlId), value, phase });

/** The frontier's LinksDiscovered messages of a sitemap's URLs, in order, SITEMAP_LINKS_PER_MESSAGE at most each. */
export function sitemapLinks(task: FetchTask, urls: string[]): Emission[] {
  const out: Emission[] = [];
  for (let i = 0; i < urls.length; i += SITEMAP_LINKS_PER_MESSAGE) {
    const links = urls.slice(i, i + SITEMAP_LINKS_PER_MESSAGE);
    out.push(inbox(task.crawlId, { type: "LinksDiscovered", crawlId: task.crawlId, urlKey: task.urlKey, url: task.url, depth: 0, links, source: "sitemap" }, 0));
  }
  return out;
}

/**
 * Keyed mode, a lane per task: the tasks of a partition (up to `held`: FETCH_TASKS_HELD) wait for their host's turn
 * side by side (politeness.ts), each one produced and done on its own, so a slow or paused host holds only its own
 * tasks and the partition's other hosts go on; the offset commit waits for the oldest task not done. How many fetch at
 * once in the process is the load guard's (FETCH_CONCURRENCY). The task's key is not read: a task keyed crawl + host
 * (before fetch.tasks was keyed by host) is handled alike.
 */
export class FetchRenderProcessor extends DeclaredProcessor implements Processor<FetchTask, Batch> {
  readonly mode = "keyed" as const;
  readonly concurrency: number;
  private readonly deps: FetchRenderDeps;
  private readonly log: Logger;
  /** fetch attempts behind a page's failure, for its PageFailed */
  private readonly attempts = new WeakMap<object, number>();

  constructor(deps: FetchRenderDeps, held: number) {
    super("fetch-render");
    this.deps = deps;
    this.concurrency = held;
    this.log = deps.log.child({ component: "fetch-render" });
    // a stop: tasks waiting for their host's turn are not fetched now (FETCH_INTERRUPTED: fetched after the restart)
    deps.stopping?.addEventListener("abort", () => deps.politeness.giveUpWaiting(STOPPING), { once: true });
  }

  lane(msg: Consumed<FetchTask>): string {
    return msg.offset;
  }

  /**
   * A rebalance: every partition starts over from its committed offset (lanes.ts), perhaps in another replica, which
   * then owns the host: the tasks still waiting here for a host's turn give up, unfetched and not committed, so that
   * two replicas never fetch one host at once.
   */
  onPartitionsAssigned(): void {
    this.deps.politeness.giveUpWaiting(REASSIGNED);
  }

  createBatch(): Batch {
    return { cancelled: new Set() };
  }

  async prepare(messages: Consumed<FetchTask>[], batch: Batch): Promise<void> {
    batch.cancelled = await this.deps.cancels.check(messages.map((m) => m.value.crawlId));
  }

  async handle(msg: Consumed<FetchTask>, batch: Batch): Promise<Emission[]> {
    const task = msg.value;
    if (batch.cancelled.has(task.crawlId)) {
      // cancelled, or ended (a task delivered again after a crash): not fetched, nor archived
      this.log.debug({ crawlId: task.crawlId, urlKey: task.urlKey }, "crawl ended or cancelled: fetch dropped");
      return [];
    }
    if (task.kind === "discover") return this.discover(task);
    try {
      return await this.fetchPage(task);
    } catch (err) {
      if (!(err instanceof GateWaitAborted)) throw err;
      if (err.reason === REASSIGNED) return []; // not committed: delivered again from the committed offset
      if (err.reason === CANCELLED) return []; // as a task of a cancelled crawl is at its delivery
      if (err.reason === STOPPING) throw new TrawlError("FETCH_INTERRUPTED", "the process is stopping; the page is fetched after the restart", { retriable: true });
      // waited HOST_WAIT_MAX_MS for its host (slow, paused, or with many pages ahead): back to the end of the topic,
      // under the host's key, so that this partition's offsets move on; it meets its host's turn again later
      this.log.debug({ crawlId: task.crawlId, urlKey: task.urlKey, host: this.politenessOf(task.url) }, "fetch task sent back: its host's turn did not come");
      return [{ topic: "fetch.tasks", key: keys.politeness(this.politenessOf(task.url)), value: task }];
    }
  }

  private politenessOf(url: string): string {
    return politenessKey(url, this.deps.politenessScope);
  }

  private userAgent(task: FetchTask): string {
    return task.options.robotsUserAgent ?? this.deps.robotsUserAgent;
  }

  /** Throws when robots.txt disallows the URL; else its host's Crawl-delay for this crawl (0: none or ignored). */
  private async checkRobots(task: FetchTask, url: string): Promise<number> {
    if (task.options.ignoreRobotsTxt) return 0;
    const robots = await this.deps.robots.get(url);
    if (!robots.isAllowed(url, this.userAgent(task))) {
      const rule = robots.rule?.(url, this.userAgent(task));
      throw new PageError(ROBOTS_BLOCKED, `robots.txt disallows ${url}${rule ? ` (${rule})` : ""}`);
    }
    return Math.min(robots.crawlDelayMs(this.userAgent(task)), MAX_CRAWL_DELAY_MS);
  }

  /** robots.txt and sitemaps of the start URL: LinksDiscovered (acked first), then DiscoveryDone. */
  private discover(task: FetchTask): Promise<Emission[]> {
    const { warc } = this.deps;
    return warc && task.options.warc ? warc.around(task, "sitemap", (capture) => this.discoverWith(task, capture)) : this.discoverWith(task);
  }

  private async discoverWith(task: FetchTask, capture?: (e: HttpExchange) => void): Promise<Emission[]> {
    const { deps } = this;
    const timeoutMs = task.options.timeoutMs ?? deps.defaultTimeoutMs;
    const robots = await deps.robots.get(task.url);
    const out: Emission[] = [];
    let sitemaps = 0;
    let warnings: SitemapWarning[] = [];
    if ((task.options.sitemap ?? "include") !== "skip") {
      const found = await discoverSitemapUrls(capture ? WarcTap.capturing(deps.fetcher, capture) : deps.fetcher, task.url, robots.sitemaps, {
        maxSitemaps: deps.maxSitemaps, maxUrls: Math.max(task.options.limit * 2, 1000), timeoutMs, maxBytes: deps.sitemapMaxBytes,
      });
      sitemaps = found.sitemaps;
      warnings = found.warnings;
      out.push(...sitemapLinks(task, found.urls));
      this.log.info({ crawlId: task.crawlId, sitemaps, urls: found.urls.length, skipped: warnings.length }, "sitemaps read");
    }
    out.push(inbox(task.crawlId, { type: "DiscoveryDone", crawlId: task.crawlId, sitemaps, ...(warnings.length ? { warnings } : {}) }, 1));
    return out;
  }

  private fetchPage(task: FetchTask): Promise<Emission[]> {
    const { warc } = this.deps;
    return warc && task.options.warc ? warc.around(task, "page", (capture) => this.fetchPageWith(task, capture)) : this.fetchPageWith(task);
  }

  private async fetchPageWith(task: FetchTask, capture?: (e: HttpExchange) => void): Promise<Emission[]> {
    const { deps } = this;
    const renderMode = deps.renderMode ?? "never";
    const crawlDelayMs = await this.checkRobots(task, task.url);
    const needs = browserOption(task.options);
    if (needs) {
      // waitFor, actions, screenshot, branding, mobile: only a browser can do them; no static fetch first
      if (renderMode === "never") throw new PageError("SCRAPE_BROWSER_UNAVAILABLE", `${needs} needs a browser, and RENDER=never`);
      return [this.toRender(task, needs, true)];
    }
    const timeoutMs = task.options.timeoutMs ?? deps.defaultTimeoutMs;
    // the host (or registrable domain) whose politeness every crawl of it shares: this process is its only fetcher
    const host = this.politenessOf(task.url);
    const crawlSerial = task.options.delayMs !== undefined && task.options.delayMs > 0;
    const hostKey = `host:${host}`;
    // the host's adaptive limit; a Crawl-delay means one fetch at a time that far apart; the crawl's own gate
    // (maxConcurrency, delay) and a Retry-After's hold apply whatever the host's limit
    const rules = [
      { key: hostKey, maxConcurrent: crawlDelayMs > 0 ? 1 : () => deps.hosts.limit(host), spacingMs: Math.max(deps.hostDelayMs, crawlDelayMs) },
      { key: `crawl:${task.crawlId}`, maxConcurrent: crawlSerial ? 1 : (task.options.maxConcurrency ?? Number.MAX_SAFE_INTEGER), spacingMs: task.options.delayMs ?? 0 },
    ];
    // change tracking: If-None-Match / If-Modified-Since from the page's last snapshot (not part of the page cache's key)
    const previous = await previousSnapshot(deps.snapshots, task);
    const conditional = conditionalHeaders(previous);
    const headers = Object.keys(conditional).length ? { ...task.options.headers, ...conditional } : task.options.headers;
    let tries = 0;
    const fetchOnce = async () => {
      // a crawl cancelled (or ended) while this task waited for its host's turn (or a retry's): not fetched, its turn goes on
      if ((await deps.cancels.check([task.crawlId])).has(task.crawlId)) throw new GateWaitAborted(CANCELLED);
      tries++;
      // each attempt runs in a slot of the load guard (waits for the host, a Retry-After or a retry's backoff hold none)
      const release = await deps.load?.admit();
      const ticket = deps.hosts.start(host);
      const sent = performance.now();
      try {
        const result = await deps.fetcher.fetch({ url: task.url, timeoutMs, headers, errorPages: task.options.kind === "batch", ...(capture ? { capture } : {}) });
        deps.hosts.end(host, ticket, answerOf(result.statusCode, result.headersMs ?? performance.now() - sent));
        return result;
      } catch (err) {
        deps.hosts.end(host, ticket, err instanceof PageError ? answerOf(err.statusCode, undefined, err.code) : { kind: "neutral" });
        const wait = err instanceof PageError ? err.retryAfterMs : undefined;
        if (wait !== undefined && wait > 0) deps.politeness.holdFor(hostKey, Math.min(wait, deps.retryAfterMaxMs));
        throw err;
      } finally {
        release?.();
      }
    };
    const fetchWithRetries = () => retry(
      // a task not fetched yet gives up its wait for the host's turn after HOST_WAIT_MAX_MS (sent back, see handle)
      () => deps.politeness.run(rules, fetchOnce, { turn: task.crawlId, ...(tries === 0 ? { maxWaitMs: deps.hostWaitMaxMs ?? 60_000 } : {}) }),
      {
        retries: deps.retries,
        initialMs: 500,
        maxMs: 8000,
        retriable: (err) => err instanceof TrawlError && err.retriable && !((err as PageError).retryAfterMs! > deps.retryAfterMaxMs),
        delayFor: (err) => (err as PageError).retryAfterMs,
        onRetry: (err, attempt, delayMs) =>
          this.log.info({ crawlId: task.crawlId, urlKey: task.urlKey, attempt: task.attempt + attempt, code: errorCode(err), delayMs }, "fetch retry"),
      },
    );
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    const { result, cacheState, cachedAt } = await cachedFetch(
      { cache: deps.cache, cacheMaxAgeMs: deps.cacheMaxAgeMs ?? 0, now: deps.now ?? Date.now, log: this.log },
      { url: task.url, headers: task.options.headers, maxAgeMs: task.options.maxAgeMs, storeInCache: task.options.storeInCache, minAgeMs: task.options.minAgeMs, lockdown: task.options.lockdown },
      fetchWithRetries,
    ).catch((err: unknown) => {
      if (err instanceof GateWaitAborted) throw err;
      deps.metrics?.fetchSeconds.observe({ outcome: errorCode(err) }, seconds());
      if (tries > 0 && typeof err === "object" && err !== null) this.attempts.set(err, task.attempt + tries);
      throw err;
    });
    deps.metrics?.fetchSeconds.observe({ outcome: "ok" }, seconds());
    deps.metrics?.fetchBytes.observe(result.bytes?.length ?? Buffer.byteLength(result.body));
    const finalUrlKey = crawlUrlKey(result.finalUrl, task.options);
    if (finalUrlKey !== task.urlKey) {
      // a redirect: its target must pass the same scope rules (and robots.txt) as a discovered link
      const verdict = inScope(task.startUrl ?? task.url, result.finalUrl, task.options, task.url);
      if (verdict !== "ok" && task.depth > 0) {
        throw new PageError("SCRAPE_REDIRECT_OUT_OF_SCOPE", `redirected to ${result.finalUrl}, which is out of the crawl's scope (${verdict})`, { statusCode: result.statusCode });
      }
      await this.checkRobots(task, result.finalUrl);
    }
    const fresh = previous ? afterFetch(previous, result) : null;
    // fastMode: the static page as fetched, never the browser; minAge / lockdown: the cached page, never the browser
    if (!fresh?.reuse && renderMode !== "never" && !task.options.fastMode && !cacheOnly(task.options) && /html/i.test(result.contentType) && result.statusCode < 400) {
      const why = renderMode === "always" ? "RENDER=always" : scriptBuilt(result.body);
      if (why) {
        this.log.debug({ crawlId: task.crawlId, urlKey: task.urlKey, why }, "page handed to the browser");
        return [this.toRender(task, why, false, { finalUrl: result.finalUrl, statusCode: result.statusCode, contentType: result.contentType, body: result.body })];
      }
    }
    const page: PageFetched = {
      engine: "fetch",
      crawlId: task.crawlId,
      ...(task.teamId ? { teamId: task.teamId } : {}),
      url: task.url,
      urlKey: task.urlKey,
      finalUrl: result.finalUrl,
      finalUrlKey,
      depth: task.depth,
      statusCode: result.statusCode,
      contentType: result.contentType,
      // a page that did not change travels as its stored document, not its body
      body: fresh?.reuse ? "" : result.body,
      ...(!fresh?.reuse && result.contentType === "application/pdf" && result.bytes ? { bodyBase64: result.bytes.toString("base64") } : {}),
      ...(fresh ? { freshness: fresh.freshness } : {}),
      ...(fresh?.reuse ? { reuse: fresh.reuse } : {}),
      scrapeId: randomUUID(),
      options: task.options,
      ...(cacheState ? { cacheState } : {}),
      ...(cachedAt !== undefined ? { cachedAt } : {}),
    };
    deps.metrics?.pagesFetched.inc({ outcome: "ok" });
    return [{ topic: "pages.fetched", key: keys.crawlUrl(task.crawlId, task.urlKey), value: page }];
  }

  /** The page goes to the render role, keyed like its fetch task (by host: one owner per host). */
  private toRender(task: FetchTask, reason: string, required: boolean, document?: RenderTask["document"]): Emission {
    return { topic: "render.tasks", key: keys.politeness(this.politenessOf(task.url)), value: { task, reason, required, ...(document ? { document } : {}) } satisfies RenderTask };
  }

  onPageFailure(msg: Consumed<FetchTask>, err: unknown): Emission[] {
    const task = msg.value;
    if (task.kind === "discover") {
      // discovery is best effort: the crawl goes on with what the pages link to
      this.log.warn({ crawlId: task.crawlId, err: errorMessage(err) }, "discovery failed");
      return [inbox(task.crawlId, { type: "DiscoveryDone", crawlId: task.crawlId, sitemaps: 0 })];
    }
    this.deps.metrics?.pagesFetched.inc({ outcome: errorCode(err) });
    const failed: FrontierInboxMessage = {
      type: "PageFailed",
      crawlId: task.crawlId,
      urlKey: task.urlKey,
      url: task.url,
      code: errorCode(err),
      error: errorMessage(err),
      ...(err instanceof PageError && err.statusCode ? { statusCode: err.statusCode } : {}),
      ...(typeof err === "object" && err !== null && this.attempts.has(err) ? { attempts: this.attempts.get(err) } : {}),
    };
    return [inbox(task.crawlId, failed)];
  }
}
