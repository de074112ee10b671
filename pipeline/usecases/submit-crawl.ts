// Submitting and cancelling a crawl: the one place that writes the crawl record and tells the frontier.
// Used by the HTTP API and the `trawl crawl` CLI.
import { randomUUID } from "node:crypto";
import type { CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import type { Bus } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlRecord, CrawlStore } from "../store/crawl-store.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { keys } from "../topology.ts";

export interface CrawlDeps {
  store: CrawlStore;
  bus: Bus;
  clock: Clock;
  log: Logger;
}

export interface NewCrawl {
  url: string;
  options: CrawlOptions;
  teamId: string;
  /** The webhook setting as JSON text, or "" */
  webhook: string;
  /** A crawl id chosen by the caller (an extract job's crawl: the same id when the job is resumed); default random */
  id?: string;
}

/** Writes the crawl record (so it is queryable at once), then queues it. Returns the crawl id. */
export async function submitCrawl(deps: CrawlDeps, crawl: NewCrawl): Promise<string> {
  const { store, bus, clock, log } = deps;
  const id = crawl.id ?? randomUUID();
  const now = clock.now();
  const record: CrawlRecord = {
    crawlId: id, version: 0, teamId: crawl.teamId, url: crawl.url, options: crawl.options, webhook: crawl.webhook, status: "scraping",
    total: 0, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: false,
    createdAt: now, updatedAt: now, completedAt: 0, expiresAt: now + RETENTION_MS, error: "",
  };
  await store.saveCrawls([record]);
  const requested: FrontierInboxMessage = {
    type: "CrawlRequested", crawlId: id, url: crawl.url, options: crawl.options, createdAt: now, teamId: crawl.teamId, webhook: crawl.webhook,
  };
  try {
    await bus.produce([{ topic: "frontier.inbox", key: keys.crawl(id), value: requested }]);
  } catch (err) {
    // never leave a crawl that nobody will run in `scraping`
    const failedAt = clock.now();
    await store
      .saveCrawls([{ ...record, status: "failed", error: "the crawl could not be queued", updatedAt: failedAt, completedAt: failedAt }])
      .catch((e) => log.error({ err: e, crawlId: id }, "could not mark an unqueued crawl failed"));
    throw err;
  }
  log.info({ crawlId: id, url: crawl.url, limit: crawl.options.limit }, "crawl submitted");
  return id;
}

/**
 * A crawl that may have been submitted before a crash (an extract job's, by its fixed id): submitted when it has no
 * record; asked for again while it is running (the frontier ignores a CrawlRequested it already has, and starts one
 * whose request never reached it); nothing once it ended.
 */
export async function ensureCrawl(deps: CrawlDeps, crawl: NewCrawl & { id: string }): Promise<void> {
  const record = await deps.store.getCrawl(crawl.id);
  if (!record) return void (await submitCrawl(deps, crawl));
  if (record.status !== "scraping") return;
  const requested: FrontierInboxMessage = {
    type: "CrawlRequested", crawlId: record.crawlId, url: record.url, options: record.options, createdAt: record.createdAt, teamId: record.teamId, webhook: record.webhook,
  };
  await deps.bus.produce([{ topic: "frontier.inbox", key: keys.crawl(record.crawlId), value: requested }]);
  deps.log.info({ crawlId: record.crawlId }, "crawl asked for again (resumed)");
}

/** Tells the frontier first, then flags the crawl: the flag makes the cancel visible at once. */
export async function cancelCrawl(deps: CrawlDeps, crawlId: string): Promise<void> {
  const cancel: FrontierInboxMessage = { type: "CancelRequested", crawlId };
  await deps.bus.produce([{ topic: "frontier.inbox", key: keys.crawl(crawlId), value: cancel }]);
  await deps.store.cancelCrawl(crawlId, deps.clock.now());
  deps.log.info({ crawlId }, "crawl cancelled");
}
