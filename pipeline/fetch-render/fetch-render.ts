// fetch-render stage: fetch.tasks -> pages.fetched, or PageFailed to the frontier. Static HTTP for now;
// the Renderer port (headless Chromium) plugs in here later.
import { randomUUID } from "node:crypto";
import type { FetchTask, FrontierInboxMessage, PageFetched } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { errorCode, errorMessage, PageError, TrawlError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { retry } from "../runtime/retry.ts";
import { keys } from "../topology.ts";
import type { CancelCache } from "../store/cancel-cache.ts";
import type { Fetcher } from "./fetcher.ts";

export interface FetchRenderDeps {
  fetcher: Fetcher;
  cancels: CancelCache;
  log: Logger;
  defaultTimeoutMs: number;
  retries: number;
}

interface Batch {
  cancelled: Set<string>;
}

export class FetchRenderProcessor implements Processor<FetchTask, Batch> {
  readonly name = "fetch-render";
  readonly topic = "fetch.tasks" as const;
  readonly schema = "fetch-task" as const;
  readonly mode = "parallel" as const;
  readonly concurrency: number;
  private readonly deps: FetchRenderDeps;
  private readonly log: Logger;

  constructor(deps: FetchRenderDeps, concurrency: number) {
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
    const timeoutMs = task.options.timeoutMs ?? this.deps.defaultTimeoutMs;
    const result = await retry(
      () => this.deps.fetcher.fetch({ url: task.url, timeoutMs, headers: task.options.headers }),
      {
        retries: this.deps.retries,
        initialMs: 500,
        maxMs: 8000,
        retriable: (err) => err instanceof TrawlError && err.retriable,
        onRetry: (err, attempt, delayMs) =>
          this.log.info({ crawlId: task.crawlId, urlKey: task.urlKey, attempt: task.attempt + attempt, code: errorCode(err), delayMs }, "fetch retry"),
      },
    );
    const page: PageFetched = {
      crawlId: task.crawlId,
      url: task.url,
      urlKey: task.urlKey,
      finalUrl: result.finalUrl,
      depth: task.depth,
      statusCode: result.statusCode,
      contentType: result.contentType,
      body: result.body,
      scrapeId: randomUUID(),
      options: task.options,
    };
    return [{ topic: "pages.fetched", key: keys.crawlUrl(task.crawlId, task.urlKey), value: page }];
  }

  onPageFailure(msg: Consumed<FetchTask>, err: unknown): Emission[] {
    const task = msg.value;
    const failed: FrontierInboxMessage = {
      type: "PageFailed",
      crawlId: task.crawlId,
      urlKey: task.urlKey,
      url: task.url,
      code: errorCode(err),
      error: errorMessage(err),
      ...(err instanceof PageError && err.statusCode ? { statusCode: err.statusCode } : {}),
    };
    return [{ topic: "frontier.inbox", key: keys.crawl(task.crawlId), value: failed }];
  }
}
