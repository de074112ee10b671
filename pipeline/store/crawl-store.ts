// Storage ports. Adapters: ClickHouse (clickhouse-crawl-store.ts); an embedded one comes with the embedded mode.
import type { CrawlOptions } from "../../schemas/index.ts";
import type { ReasonCounts, UrlReason } from "./url-reason.ts";
import type { UrlListing } from "./url-listing.ts";

export type CrawlStatus = "scraping" | "completed" | "failed" | "cancelled";

/** One version of a crawl's record. */
export interface CrawlRecord {
  crawlId: string;
  version: number;
  teamId: string;
  url: string;
  options: CrawlOptions;
  /** The webhook setting as given (JSON), or "" */
  webhook: string;
  status: CrawlStatus;
  total: number;
  completed: number;
  failed: number;
  creditsUsed: number;
  /** LLM tokens used by the crawl's pages (json / summary with the llm provider), counted once per page like credits */
  tokensUsed: number;
  discoveryDone: boolean;
  createdAt: number;
  updatedAt: number;
  completedAt: number;
  expiresAt: number;
  /** Why the crawl failed, or "" */
  error: string;
  /** The crawl's URLs by reason (url-reason.ts), skipped ones past the listed bound included; absent in older records */
  reasons?: ReasonCounts;
}

/** skipped: seen and not crawled (out of scope, excluded, too deep, over limit, a duplicate): its reason says why */
export const URL_STATE = { queued: 0, done: 1, failed: 2, blocked: 3, skipped: 4 } as const;
export type UrlState = (typeof URL_STATE)[keyof typeof URL_STATE];

export interface UrlRow {
  crawlId: string;
  urlKey: string;
  url: string;
  depth: number;
  state: UrlState;
  version: number;
  /** Why (absent in rows written before reasons were recorded: derived from the state) */
  reason?: UrlReason;
  /** The rule, pattern, duplicated URL or error behind the reason */
  detail?: string;
  /** The page it was found on; "sitemap"; "" for the start URL */
  from?: string;
  /** Fetch attempts of a failed URL */
  attempts?: number;
}

/**
 * A URL's latest row with what earlier rows knew (both stores read the same way): state, depth, reason, detail and
 * attempts of the latest version; the URL and the page it was found on from the latest rows that have them (the row a
 * PageDone writes has neither).
 */
export function mergeUrlRow(prev: UrlRow | undefined, r: UrlRow): UrlRow {
  if (!prev) return r;
  const [older, newer] = r.version >= prev.version ? [prev, r] : [r, prev];
  const { reason, detail, from, attempts, ...base } = newer;
  const url = newer.url || older.url;
  const found = from || older.from || "";
  return { ...base, url, ...(reason ? { reason, detail: detail ?? "", from: found } : {}), ...(attempts ? { attempts } : {}) };
}

export interface DocumentRow {
  crawlId: string;
  seq: number;
  urlKey: string;
  /** Dedup key of the URL after redirects (= urlKey without a redirect). */
  finalKey: string;
  scrapeId: string;
  url: string;
  statusCode: number;
  credits: number;
  storedAt: number;
  /** The document's JSON text, exactly as the API returns it. */
  doc: string;
}

export interface ErrorRow {
  crawlId: string;
  urlKey: string;
  url: string;
  code: string;
  error: string;
  statusCode: number;
  at: number;
}

export interface DeliveryRow {
  crawlId: string;
  eventId: string;
  event: string;
  url: string;
  /** 0 when no HTTP answer */
  statusCode: number;
  /** 0: handed to delivery; n: the n-th attempt */
  attempt: number;
  error: string;
  at: number;
}

/** What outlives a crawl's deletion: whose it was, when it started and what it cost. */
export interface ExpiredCrawl {
  crawlId: string;
  teamId: string;
  creditsUsed: number;
  tokensUsed: number;
  createdAt: number;
}

/** What one job cost (a crawl, a batch, a scrape, ...) and when it is counted (a crawl: when it was created). */
export interface JobUsage {
  credits: number;
  tokens: number;
  at: number;
}

/** A crawl record's usage; records written before tokens were counted have none. */
export const crawlUsage = (c: Pick<CrawlRecord, "creditsUsed" | "tokensUsed" | "createdAt">): JobUsage => ({ credits: c.creditsUsed, tokens: c.tokensUsed ?? 0, at: c.createdAt });

/** LLM tokens a document's json / summary extraction used (`metadata.extract.tokens`; 0 without extraction). */
export function documentTokens(document: { metadata: Record<string, unknown> }): number {
  const tokens = Number((document.metadata.extract as { tokens?: unknown } | undefined)?.tokens ?? 0);
  return Number.isSafeInteger(tokens) && tokens > 0 ? tokens : 0;
}

/** The usage that outlives a crawl's deletion. */
export const expiredCrawl = (c: CrawlRecord): ExpiredCrawl => ({ crawlId: c.crawlId, teamId: c.teamId, creditsUsed: c.creditsUsed, tokensUsed: c.tokensUsed ?? 0, createdAt: c.createdAt });

export interface DocumentPage {
  /** JSON texts of the documents, in completion order. */
  docs: string[];
  /** The `skip` of the next chunk. */
  nextSkip: number;
  /** More stored documents exist at or after nextSkip. */
  more: boolean;
}

/** What a full-text search needs from the stored documents (every term is lower-case). */
export interface SearchCandidates {
  /** documents stored since `since` */
  corpus: number;
  /** per term: how many of them contain it */
  df: number[];
  /** JSON texts of documents containing at least one term, those containing most terms first */
  docs: string[];
}

/** A crawl's stored URL keys, with the seq each was stored at (`seqs[i]` is `keys[i]`'s), where they ended after redirects. */
export interface DocumentKeys {
  nextSeq: number;
  keys: string[];
  seqs: number[];
  finalKeys: string[];
}

/** Where a crawl's URL listing is kept once built (url-listing.ts), and built off the request path. */
export interface CrawlUrlListings {
  /** The listing built for the crawl as it is now, or null (none, or built before its record or URL rows changed). */
  open(crawl: CrawlRecord): UrlListing | null;
  /**
   * The listing to page: a finished crawl's as it is now (the store starts its build when the crawl ends; a reader
   * waits for that build, never starts another); a running crawl's the latest one built, rebuilt in the background
   * when stale (at most every few seconds), so a page of it is a few reads by position.
   */
  listing(crawl: CrawlRecord): Promise<UrlListing>;
}

export interface CrawlStore {
  /** The embedded store keeps finished crawls' URL listings on disk; absent: a listing is built for each read. */
  readonly urlListings?: CrawlUrlListings;
  /** The latest version of a crawl, with the cancel flag applied; null when unknown. */
  getCrawl(crawlId: string): Promise<CrawlRecord | null>;
  saveCrawls(records: CrawlRecord[]): Promise<void>;
  cancelCrawl(crawlId: string, at: number): Promise<void>;
  /** Which of these crawls were cancelled. */
  cancelled(crawlIds: string[]): Promise<Set<string>>;
  /** Which of these crawls ended: cancelled, or their latest record completed or failed (their work in flight is dropped). */
  ended(crawlIds: string[]): Promise<Set<string>>;
  saveUrls(rows: UrlRow[]): Promise<void>;
  /** Latest state of every URL key of a crawl. */
  loadUrls(crawlId: string): Promise<UrlRow[]>;
  insertDocuments(rows: DocumentRow[]): Promise<void>;
  /** What the sink needs to resume a crawl: the next seq, the url keys already stored and their final (redirect) keys. */
  documentKeys(crawlId: string): Promise<DocumentKeys>;
  /** Documents with seq >= skip, up to maxBytes of JSON (at least one) and maxDocs. */
  pageDocuments(crawlId: string, skip: number, maxBytes: number, maxDocs: number): Promise<DocumentPage>;
  /**
   * The document of a single scrape (its job's first row) if it was stored at or after `storedSince`: a scrape expires
   * exactly at the retention, while its row stays until the sweep (ClickHouse: until its day is dropped, up to a day later).
   */
  scrapeDocument(jobId: string, storedSince: number): Promise<string | undefined>;
  /** Crawls of a team still running (not cancelled), newest first. */
  activeCrawls(teamId: string): Promise<CrawlRecord[]>;
  insertErrors(rows: ErrorRow[]): Promise<void>;
  listErrors(crawlId: string): Promise<ErrorRow[]>;
  /**
   * Deletes every trace of crawls whose results expired before `now`, and single scrapes older than the retention.
   * `beforeDelete` sees the crawls about to go (e.g. to keep their credits in the ledger); when it throws, nothing is deleted.
   */
  deleteExpired(now: number, retentionMs: number, beforeDelete?: (crawls: ExpiredCrawl[]) => Promise<void>): Promise<string[]>;
  /** Every crawl still running (not ended, not cancelled), of every team. */
  runningCrawlIds(): Promise<string[]>;
  /** Credits and tokens used by each crawl of a team still in the store. */
  usageByCrawl(teamId: string): Promise<Map<string, JobUsage>>;
  logDeliveries(rows: DeliveryRow[]): Promise<void>;
  /** Records a team's idempotency key; false when it was recorded before, less than the retention before `at`. */
  claimIdempotencyKey(teamId: string, key: string, at: number): Promise<boolean>;
  /** The delivery log of a crawl, oldest first. */
  listDeliveries(crawlId: string): Promise<DeliveryRow[]>;
  /** When the newest document of a team (its crawls, batches and scrapes) with a status below 400 was stored, if one was stored since `since`. */
  mostRecentSuccess(teamId: string, since: number): Promise<number | null>;
  /** A team's stored documents (its crawls and scrapes) since `since` that contain any of the terms (case-insensitive substring). */
  searchCandidates(teamId: string, terms: string[], since: number, maxDocs: number): Promise<SearchCandidates>;
}
