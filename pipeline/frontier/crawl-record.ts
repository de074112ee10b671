// A crawl state as its persisted record (the crawls table / journal), written after every step that changed it.
import type { CrawlOptions } from "../../schemas/index.ts";
import type { CrawlRecord, CrawlStatus } from "../store/crawl-store.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { reasonCounts, type UrlLog } from "./url-log.ts";

/** The part of the reducer's CrawlState a record is made of. */
interface RecordedState {
  crawlId: string; version: number; teamId: string; startUrl: string; options: CrawlOptions; webhook: string; status: CrawlStatus;
  queued: number; done: number; failed: number; blocked: number; creditsUsed: number; tokensUsed: number; discovering: boolean;
  createdAt: number; completedAt: number; error: string; log: UrlLog;
}

/** The crawl record of a state, as persisted after a step. */
export function toRecord(state: RecordedState, now: number): CrawlRecord {
  const terminal = state.status !== "scraping";
  return {
    crawlId: state.crawlId,
    version: state.version,
    teamId: state.teamId,
    url: state.startUrl,
    options: state.options,
    webhook: state.webhook,
    status: state.status,
    total: state.queued + state.done,
    completed: state.done,
    failed: state.failed,
    creditsUsed: state.creditsUsed,
    tokensUsed: state.tokensUsed,
    discoveryDone: !state.discovering,
    createdAt: state.createdAt,
    updatedAt: now,
    completedAt: state.completedAt,
    expiresAt: (terminal ? state.completedAt : now) + RETENTION_MS,
    error: state.error,
    reasons: reasonCounts(state.log, state),
  };
}
