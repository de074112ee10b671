// Submitting a batch scrape: a job of kind "batch" through the crawl's stages (frontier, fetch-render, convert, sink)
// with its URLs seeded and no link following. The record is written first (queryable at once), then the
// CrawlRequested and the URLs in SeedsAdded chunks, so that no bus message exceeds the size limit. No fetch here.
import { randomBytes, randomUUID } from "node:crypto";
import type { CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { keys } from "../topology.ts";
import type { CrawlDeps } from "./submit-crawl.ts";

/** A chunk of seeds: at most this many URLs and (roughly) this many bytes of them. */
export const SEED_CHUNK_URLS = 2000;
export const SEED_CHUNK_BYTES = 256 * 1024;

export interface NewBatch {
  urls: string[];
  options: CrawlOptions;
  teamId: string;
  /** The webhook setting as JSON text, or "" */
  webhook: string;
  /** A batch id chosen by the caller (a monitor's check) and its seeds' key prefix: a second submit adds no URL; default random */
  id?: string;
  keyPrefix?: string;
}

/** Splits URLs into chunks under both bounds (a single URL longer than the byte bound is a chunk alone). */
export function seedChunks(urls: string[]): { first: number; urls: string[] }[] {
  const chunks: { first: number; urls: string[] }[] = [];
  let current: string[] = [];
  let bytes = 0;
  let first = 0;
  urls.forEach((url, i) => {
    const size = Buffer.byteLength(url) + 3;
    if (current.length > 0 && (current.length >= SEED_CHUNK_URLS || bytes + size > SEED_CHUNK_BYTES)) {
      chunks.push({ first, urls: current });
      current = [];
      bytes = 0;
      first = i;
    }
    current.push(url);
    bytes += size;
  });
  if (current.length > 0) chunks.push({ first, urls: current });
  return chunks;
}

/** `credits`: an append's, raising the batch's budget; carried by the first chunk, before any of its pages is billed. */
function seedMessages(crawlId: string, urls: string[], keyPrefix = randomBytes(6).toString("hex"), credits?: number): FrontierInboxMessage[] {
  const chunks = seedChunks(urls);
  return chunks.map((c, i) => ({
    type: "SeedsAdded", crawlId, keyPrefix, first: c.first, urls: c.urls, last: i === chunks.length - 1, ...(i === 0 && credits ? { credits } : {}),
  }));
}

/** Writes the batch's record, then queues it with its URLs. Returns the batch id. */
export async function submitBatch(deps: CrawlDeps, batch: NewBatch): Promise<string> {
  const { store, bus, clock, log } = deps;
  const id = batch.id ?? randomUUID();
  const now = clock.now();
  const url = batch.urls[0] as string;
  const record: CrawlRecord = {
    crawlId: id, version: 0, teamId: batch.teamId, url, options: batch.options, webhook: batch.webhook, status: "scraping",
    total: batch.urls.length, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: false,
    createdAt: now, updatedAt: now, completedAt: 0, expiresAt: now + RETENTION_MS, error: "",
  };
  await store.saveCrawls([record]);
  const requested: FrontierInboxMessage = { type: "CrawlRequested", crawlId: id, url, options: batch.options, createdAt: now, teamId: batch.teamId, webhook: batch.webhook };
  const messages = [requested, ...seedMessages(id, batch.urls, batch.keyPrefix)];
  try {
    // one key: one partition, in order
    await bus.produce(messages.map((value) => ({ topic: "frontier.inbox" as const, key: keys.crawl(id), value })));
  } catch (err) {
    const failedAt = clock.now();
    await store
      .saveCrawls([{ ...record, status: "failed", error: "the batch scrape could not be queued", updatedAt: failedAt, completedAt: failedAt }])
      .catch((e) => log.error({ err: e, crawlId: id }, "could not mark an unqueued batch failed"));
    throw err;
  }
  log.info({ crawlId: id, urls: batch.urls.length, chunks: messages.length - 1 }, "batch scrape submitted");
  return id;
}

/**
 * appendToId: more URLs for a running batch (its options stay those of the first request). `credits`: reserved for
 * them (authentication on); the frontier raises the batch's budget (maxCredits) by them.
 */
export async function appendToBatch(deps: CrawlDeps, crawlId: string, urls: string[], credits?: number): Promise<void> {
  const messages = seedMessages(crawlId, urls, undefined, credits);
  await deps.bus.produce(messages.map((value) => ({ topic: "frontier.inbox" as const, key: keys.crawl(crawlId), value })));
  deps.log.info({ crawlId, urls: urls.length, ...(credits ? { credits } : {}) }, "URLs appended to a batch scrape");
}
