// render stage: render.tasks -> pages.fetched (or PageFailed). Pages that fetch-render found need a browser are
// rendered by headless Chromium through the Renderer port; a page that only looked script-built falls back to its
// static HTML (with a warning) when no browser is available or the browser fails on it.
import { baseFreshness } from "../store/page-freshness.ts";
import { randomUUID } from "node:crypto";
import type { FetchTask, FrontierInboxMessage, PageFetched, RenderTask } from "../../schemas/index.ts";
import type { RenderAction, Renderer, RenderRequest, RenderResult } from "../browser/renderer.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage, InfrastructureError, PageError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CancelCache } from "../store/cancel-cache.ts";
import { publishScreenshots, type ScreenshotStore } from "../store/screenshot-store.ts";
import type { WarcArchive } from "../store/warc/warc-archive.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import { keys } from "../topology.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";
import { inScope } from "../url/scope.ts";

export interface RenderDeps {
  renderer: Renderer;
  cancels: CancelCache;
  log: Logger;
  defaultTimeoutMs: number;
  /** the load guard: how many pages render at once under load (MAX_CPU, MAX_RAM, LOAD_GUARD_MIN_CONCURRENCY); admit() resolves with the page's release */
  load?: { admit(): Promise<() => void> };
  /** SCREENSHOTS=url: screenshots are stored here and the documents get their URLs (absent: data URLs) */
  screenshots?: ScreenshotStore;
  now?: () => number;
  /** web archives: a job with `warc` gets the rendered DOM as a conversion record (the response was archived by fetch-render) */
  warc?: WarcArchive;
}

interface Batch {
  cancelled: Set<string>;
}

/** The browser request of a page's options (crawl options, or a scrape's settings). */
export function renderRequest(url: string, o: Partial<FetchTask["options"]>, timeoutMs: number, document?: RenderTask["document"]): RenderRequest {
  return {
    url, timeoutMs, ...(o.headers ? { headers: o.headers } : {}), ...(o.waitForMs ? { waitForMs: o.waitForMs } : {}),
    // actions: the per-type fields were checked by the request mapping
    ...(o.actions?.length ? { actions: o.actions as RenderAction[] } : {}), ...(o.screenshot ? { screenshot: o.screenshot } : {}),
    ...(o.formats?.includes("branding") ? { branding: true } : {}),
    ...(o.mobile ? { mobile: true } : {}), ...(o.skipTlsVerification === false ? { skipTlsVerification: false } : {}),
    ...(o.blockAds === false ? { blockAds: false } : {}),
    ...(document ? { document } : {}),
  };
}

export class RenderProcessor extends DeclaredProcessor implements Processor<RenderTask, Batch> {
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly deps: RenderDeps;
  private readonly log: Logger;

  constructor(deps: RenderDeps, concurrency: number) {
    super("render");
    this.deps = deps;
    this.concurrency = concurrency;
    this.log = deps.log.child({ component: "render" });
  }

  createBatch(): Batch {
    return { cancelled: new Set() };
  }

  async prepare(messages: Consumed<RenderTask>[], batch: Batch): Promise<void> {
    batch.cancelled = await this.deps.cancels.check(messages.map((m) => m.value.task.crawlId));
  }

  async handle(msg: Consumed<RenderTask>, batch: Batch): Promise<Emission[]> {
    if (batch.cancelled.has(msg.value.task.crawlId)) return [];
    const release = await this.deps.load?.admit();
    try {
      return await this.renderAdmitted(msg);
    } finally {
      release?.();
    }
  }

  private async renderAdmitted(msg: Consumed<RenderTask>): Promise<Emission[]> {
    const { task, document, required, reason } = msg.value;
    const status = this.deps.renderer.status();
    if (!status.available) {
      if (required || !document) throw new PageError("SCRAPE_BROWSER_UNAVAILABLE", `${reason} needs a browser, and none is available: ${status.reason}`);
      return [this.page(task, { ...document, url: task.url }, "fetch", `This page looks built by scripts (${reason}), but no browser is available here: the static HTML was used.`)];
    }
    let result: RenderResult;
    // web archives: the main document as the browser got it (a page whose static fetch was handed over is served from
    // that fetch, archived by fetch-render: nothing is captured then)
    const { warc } = this.deps;
    const captured: HttpExchange[] = [];
    const request = renderRequest(task.url, task.options, task.options.timeoutMs ?? this.deps.defaultTimeoutMs, document);
    if (warc && task.options.warc) request.capture = (e) => captured.push(e);
    try {
      result = await this.deps.renderer.render(request);
    } catch (err) {
      await this.archive(task, captured);
      if (required || !document || errorCode(err) === "SCRAPE_PRIVATE_TARGET_REFUSED") throw err;
      this.log.warn({ crawlId: task.crawlId, urlKey: task.urlKey, err: errorMessage(err) }, "rendering failed: the static page is used");
      return [this.page(task, { ...document, url: task.url }, "fetch", `Rendering this script-built page failed (${errorMessage(err)}): the static HTML was used.`)];
    }
    const finalUrlKey = crawlUrlKey(result.finalUrl, task.options);
    if (finalUrlKey !== task.urlKey && task.depth > 0) {
      const verdict = inScope(task.startUrl ?? task.url, result.finalUrl, task.options, task.url);
      if (verdict !== "ok") throw new PageError("SCRAPE_REDIRECT_OUT_OF_SCOPE", `the page's script went to ${result.finalUrl}, which is out of the crawl's scope (${verdict})`);
    }
    const { screenshots } = this.deps;
    await this.archive(task, captured, result);
    const base = task.options.screenshotBase;
    if (screenshots && base) result = await publishScreenshots(result, { store: screenshots, jobId: task.crawlId, publicJobId: task.crawlId, base, now: (this.deps.now ?? Date.now)() });
    return [this.page(task, result, "chromium")];
  }

  /** A job with `warc`: the main document's exchanges the browser made, and the rendered DOM as a conversion record. */
  private async archive(task: FetchTask, captured: HttpExchange[], result?: RenderResult): Promise<void> {
    const { warc } = this.deps;
    if (!warc || !task.options.warc) return;
    try {
      const redirect = (e: HttpExchange) => e.statusCode >= 300 && e.statusCode < 400;
      await warc.archive(captured.map((exchange) => ({ exchange, context: { crawlId: task.crawlId, depth: task.depth, role: redirect(exchange) ? "redirect" as const : "page" as const } })), task.crawlId);
      if (result) await warc.archiveRendered(task.crawlId, result.finalUrl, result.body, task.depth);
    } catch (err) {
      throw new InfrastructureError("STORE_UNAVAILABLE", `web archive write failed: ${errorMessage(err)}`, err);
    }
  }

  private page(task: FetchTask, got: Pick<RenderResult, "url" | "finalUrl" | "statusCode" | "contentType" | "body" | "screenshot" | "branding" | "actions">, engine: "fetch" | "chromium", warning?: string): Emission {
    const page: PageFetched = {
      crawlId: task.crawlId, ...(task.teamId ? { teamId: task.teamId } : {}), url: task.url, urlKey: task.urlKey, finalUrl: got.finalUrl, finalUrlKey: crawlUrlKey(got.finalUrl, task.options),
      depth: task.depth, statusCode: got.statusCode, contentType: got.contentType, body: got.body, scrapeId: randomUUID(), options: task.options,
      engine, ...(got.screenshot ? { screenshot: got.screenshot } : {}),
      ...(got.branding ? { branding: got.branding as unknown as Record<string, unknown> } : {}), ...(got.actions ? { actions: got.actions as unknown as Record<string, unknown> } : {}),
      ...(warning ? { warning } : {}),
    };
    // change tracking: a rendered page has a history, but no validators or content hash (never reused)
    const freshness = baseFreshness(task);
    if (freshness) page.freshness = freshness;
    return { topic: "pages.fetched", key: keys.crawlUrl(task.crawlId, task.urlKey), value: page };
  }

  onPageFailure(msg: Consumed<RenderTask>, err: unknown): Emission[] {
    const { task } = msg.value;
    const failed: FrontierInboxMessage = {
      type: "PageFailed", crawlId: task.crawlId, urlKey: task.urlKey, url: task.url, code: errorCode(err), error: errorMessage(err),
      ...(err instanceof PageError && err.statusCode ? { statusCode: err.statusCode } : {}),
    };
    return [{ topic: "frontier.inbox", key: keys.crawl(task.crawlId), value: failed }];
  }
}
