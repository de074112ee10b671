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
import type { Politeness } from "./politeness.ts";
import type { RobotsCache } from "./robots.ts";
import type { LoadGuard } from "./load-guard.ts";
import { discoverSitemapUrls, type SitemapWarning } from "./sitemaps.ts";
import { cachedFetch, cacheOnly } from "./cached-fetch.ts";
import type { PageCache } from "../store/page-cache.ts";
import { browserOption, scriptBuilt, type RenderMode } from "../browser/needs-render.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import type { Metrics } from "../runtime/metrics.ts";

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
  hostMaxConcurrency: number;
  hostDelayMs: number;
  maxSitemaps: number;
  /** SITEMAP_MAX_BYTES: inflated size of one gzipped sitemap */
  sitemapMaxBytes: number;
  /** MAX_CPU / MAX_RAM: no new page starts while the machine is above them */
  load?: LoadGuard;
  /** maxAge / storeInCache; absent or cacheMaxAgeMs 0: no page cache */
  cache?: PageCache;
  cacheMaxAgeMs?: number;
  now?: () => number;
  /** RENDER: when pages are handed to the render role (absent: never) */
  renderMode?: RenderMode;
  /** pages fetched by outcome, fetch time and size */
  metrics?: Metrics;
}

interface Batch {
  cancelled: Set<string>;
}

const inbox = (crawlId: string, value: FrontierInboxMessage, phase?: number): Emission => ({ topic: "frontier.inbox", key: keys.crawl(crawlId), value, phase });

export class FetchRenderProcessor extends DeclaredProcessor implements Processor<FetchTask, Batch> {
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly deps: FetchRenderDeps;
  private readonly log: Logger;

  constructor(deps: FetchRenderDeps, concurrency: number) {
    super("fetch-render");
    this.deps = deps;
    this.concurrency = concurrency;
    this.log = deps.log.child({ component: "fetch-render" });
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
      this.log.debug({ crawlId: task.crawlId, urlKey: task.urlKey }, "crawl cancelled: fetch dropped");
      return [];
    }
    return task.kind === "discover" ? this.discover(task) : this.fetchPage(task);
  }

  private userAgent(task: FetchTask): string {
    return task.options.robotsUserAgent ?? this.deps.robotsUserAgent;
  }

  private async checkRobots(task: FetchTask, url: string): Promise<void> {
    if (task.options.ignoreRobotsTxt) return;
    const robots = await this.deps.robots.get(url);
    if (!robots.isAllowed(url, this.userAgent(task))) throw new PageError(ROBOTS_BLOCKED, `robots.txt disallows ${url}`);
  }

  /** robots.txt and sitemaps of the start URL: LinksDiscovered (acked first), then DiscoveryDone. */
  private async discover(task: FetchTask): Promise<Emission[]> {
    const { deps } = this;
    const timeoutMs = task.options.timeoutMs ?? deps.defaultTimeoutMs;
    const robots = await deps.robots.get(task.url);
    const out: Emission[] = [];
    let sitemaps = 0;
    let warnings: SitemapWarning[] = [];
    if ((task.options.sitemap ?? "include") !== "skip") {
      const found = await discoverSitemapUrls(deps.fetcher, task.url, robots.sitemaps, {
        maxSitemaps: deps.maxSitemaps, maxUrls: Math.max(task.options.limit * 2, 1000), timeoutMs, maxBytes: deps.sitemapMaxBytes,
      });
      sitemaps = found.sitemaps;
      warnings = found.warnings;
      if (found.urls.length) {
        out.push(inbox(task.crawlId, { type: "LinksDiscovered", crawlId: task.crawlId, urlKey: task.urlKey, url: task.url, depth: 0, links: found.urls, source: "sitemap" }, 0));
      }
      this.log.info({ crawlId: task.crawlId, sitemaps, urls: found.urls.length, skipped: warnings.length }, "sitemaps read");
    }
    out.push(inbox(task.crawlId, { type: "DiscoveryDone", crawlId: task.crawlId, sitemaps, ...(warnings.length ? { warnings } : {}) }, 1));
    return out;
  }

  private async fetchPage(task: FetchTask): Promise<Emission[]> {
    const { deps } = this;
    const renderMode = deps.renderMode ?? "never";
    await deps.load?.admit();
    await this.checkRobots(task, task.url);
    const needs = browserOption(task.options);
    if (needs) {
      // waitFor, actions, screenshot, mobile: only a browser can do them; no static fetch first
      if (renderMode === "never") throw new PageError("SCRAPE_BROWSER_UNAVAILABLE", `${needs} needs a browser, and RENDER=never`);
      return [this.toRender(task, needs, true)];
    }
    const timeoutMs = task.options.timeoutMs ?? deps.defaultTimeoutMs;
    const host = new URL(task.url).host;
    const crawlSerial = task.options.delayMs !== undefined && task.options.delayMs > 0;
    const rules = [
      { key: `host:${host}`, maxConcurrent: deps.hostMaxConcurrency, spacingMs: deps.hostDelayMs },
      { key: `crawl:${task.crawlId}`, maxConcurrent: crawlSerial ? 1 : (task.options.maxConcurrency ?? Number.MAX_SAFE_INTEGER), spacingMs: task.options.delayMs ?? 0 },
    ];
    const fetchWithRetries = () => retry(
      () => deps.politeness.run(rules, () => deps.fetcher.fetch({ url: task.url, timeoutMs, headers: task.options.headers, errorPages: task.options.kind === "batch" })),
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
      deps.metrics?.fetchSeconds.observe({ outcome: errorCode(err) }, seconds());
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
    // fastMode: the static page as fetched, never the browser; minAge / lockdown: the cached page, never the browser
    if (renderMode !== "never" && !task.options.fastMode && !cacheOnly(task.options) && /html/i.test(result.contentType) && result.statusCode < 400) {
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
      body: result.body,
      ...(result.contentType === "application/pdf" && result.bytes ? { bodyBase64: result.bytes.toString("base64") } : {}),
      scrapeId: randomUUID(),
      options: task.options,
      ...(cacheState ? { cacheState } : {}),
      ...(cachedAt !== undefined ? { cachedAt } : {}),
    };
    deps.metrics?.pagesFetched.inc({ outcome: "ok" });
    return [{ topic: "pages.fetched", key: keys.crawlUrl(task.crawlId, task.urlKey), value: page }];
  }

  /** The page goes to the render role, keyed like its fetch task (per-host order). */
  private toRender(task: FetchTask, reason: string, required: boolean, document?: RenderTask["document"]): Emission {
    return { topic: "render.tasks", key: keys.crawlHost(task.crawlId, task.url), value: { task, reason, required, ...(document ? { document } : {}) } satisfies RenderTask };
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
    };
    return [inbox(task.crawlId, failed)];
  }
}
