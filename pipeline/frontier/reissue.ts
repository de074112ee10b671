// Lost work is sent again. A message lost anywhere between the frontier's fetch task and the sink's PageDone (a
// produce that resolved without storing a record, a record deleted, a bug that swallowed one) would leave its URL
// queued, and the crawl `scraping`, forever. A crawl that made no progress (no inbox event changed its state) for
// longer than the longest time one page may legitimately take in the stages has its outstanding work sent again:
// every queued URL's fetch task, the discover task while discovery has not reported, a held job's JobQueued (the
// reducer's `resume`). Duplicates are harmless: the sink stores a URL key once and answers a repeat with PageDone
// again, and the frontier counts a URL's PageDone (and credits) once. A crawl that stays stalled is reissued again
// after twice the wait, up to REISSUE_BACKOFF_MAX times the bound.
//
// Why per crawl and not per URL: a URL legitimately waits in a queue for as long as the work ahead of it takes (a
// crawl of 100,000 pages queues them all at once), which no per-URL bound can tell from a loss; a crawl whose other
// pages keep completing is not stalled, and its lost URL is sent again once the rest is done and the bound passed.
import { javaPartition } from "../runtime/java-partitioner.ts";
import type { CrawlOptions } from "../../schemas/index.ts";
import type { CrawlState } from "./reducer.ts";

/** The time limits of the stages a page goes through (from the config table). */
export interface StageLimits {
  fetchTimeoutMs: number;
  fetchRetries: number;
  retryAfterMaxMs: number;
  hostDelayMs: number;
  convertTimeoutMs: number;
  llmTimeoutMs: number;
  llmRetries: number;
}

/** The fetch stage's longest wait between two attempts (its retry backoff's ceiling, pipeline/fetch-render). */
const FETCH_BACKOFF_MAX_MS = 8000;
/** Broker and commit latency on top of the stages' own limits. */
const SLACK_MS = 5000;
/** A stalled crawl is reissued again after 2, 4, 8 times the bound, then every 8 times. */
export const REISSUE_BACKOFF_MAX = 8;

/**
 * The longest one page of a crawl with these options may take from its fetch task to its PageDone, each stage at its
 * time limit: T = the crawl's timeout (FETCH_TIMEOUT_MS when it has none); fetch (FETCH_RETRIES + 1) × T plus
 * FETCH_RETRIES waits of max(8 s, RETRY_AFTER_MAX_MS); the spacing max(HOST_DELAY_MS, the crawl's delay); render
 * T + waitFor; convert CONVERT_TIMEOUT_MS; with json or summary, extraction (LLM_RETRIES + 1) × LLM_TIMEOUT_MS; plus
 * 5 s. Defaults: 3 × 30 + 2 × 30 + 30 + 30 + 5 = 215 s (455 s with json or summary).
 */
export function reissueAfterMs(limits: StageLimits, options: Pick<CrawlOptions, "timeoutMs" | "delayMs" | "waitForMs" | "formats">): number {
  const t = options.timeoutMs ?? limits.fetchTimeoutMs;
  const fetch = (limits.fetchRetries + 1) * t + limits.fetchRetries * Math.max(FETCH_BACKOFF_MAX_MS, limits.retryAfterMaxMs);
  const spacing = Math.max(limits.hostDelayMs, options.delayMs ?? 0);
  const render = t + (options.waitForMs ?? 0);
  const extract = options.formats.some((f) => f === "json" || f === "summary") ? (limits.llmRetries + 1) * limits.llmTimeoutMs : 0;
  return fetch + spacing + render + limits.convertTimeoutMs + extract + SLACK_MS;
}

/** The wait before the next reissue of a crawl that has been reissued `reissues` times without progress since. */
export function reissueWaitMs(boundMs: number, reissues: number): number {
  return boundMs * Math.min(REISSUE_BACKOFF_MAX, 2 ** reissues);
}

/** How often the frontier looks for stalled crawls: a quarter of the bound of a crawl without options, 0.25-10 s. */
export function reissueCheckMs(limits: StageLimits): number {
  return Math.max(250, Math.min(10_000, Math.round(reissueAfterMs(limits, { formats: [] }) / 4)));
}

/** Is the crawl's outstanding work due to be sent again: running, and no progress for the bound (with backoff)? */
export function reissueDue(state: CrawlState, now: number, limits: StageLimits): boolean {
  if (state.status !== "scraping") return false;
  return now - state.progressAt >= reissueWaitMs(reissueAfterMs(limits, state.options), state.reissues);
}

/**
 * The frontier.inbox partition of messages keyed `key` on Kafka when the topic has `partitions`: what the producer's
 * partitioner chooses (the Java client's murmur2, java-partitioner.ts).
 */
export function kafkaPartitionOf(key: string, partitions: number): number {
  return javaPartition(key, partitions);
}

/** Distinct keys seen on the partition kafkaPartitionOf gives them before KAFKA_PARTITIONS is trusted as the topic's count. */
export const CONFIRMING_KEYS = 16;

/**
 * Is a crawl's frontier.inbox partition this process's (the orphan scan asks: a crawl of another replica's partition
 * is in that replica's memory, not this one's)? Every crawl until Kafka assigns partitions (embedded mode: always).
 * On Kafka, a crawl's partition is kafkaPartitionOf(its id, KAFKA_PARTITIONS) once CONFIRMING_KEYS crawls' messages
 * arrived where that says; a message that arrives elsewhere (the topic was created with another count: an existing
 * topic keeps its own) proves the count wrong, and every crawl is this process's again (as before the check).
 */
export class InboxOwnership {
  private assigned: Set<number> | undefined;
  private readonly confirmed = new Set<string>();
  private wrong = false;
  private readonly partitions: number;

  /** partitions: KAFKA_PARTITIONS (0: unknown, every crawl is this process's) */
  constructor(partitions: number) {
    this.partitions = partitions;
  }

  /** The partitions Kafka assigned this process (after each rebalance). */
  assign(partitions: number[]): void {
    this.assigned = new Set(partitions);
  }

  /** A message keyed `key` arrived on `partition`; true the first time one shows the partition count wrong. */
  seen(key: string, partition: number): boolean {
    if (this.wrong || this.partitions < 1 || this.assigned === undefined) return false;
    if (kafkaPartitionOf(key, this.partitions) !== partition) return (this.wrong = true);
    if (this.confirmed.size < CONFIRMING_KEYS) this.confirmed.add(key);
    return false;
  }

  /** Is the crawl's partition this process's (or not known to be another's)? */
  owns(crawlId: string): boolean {
    if (this.assigned === undefined || this.wrong || this.confirmed.size < CONFIRMING_KEYS) return true;
    return this.assigned.has(kafkaPartitionOf(crawlId, this.partitions));
  }
}
