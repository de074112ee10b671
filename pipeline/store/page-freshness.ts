// Conditional fetches of change-tracking jobs: the previous snapshot of a page gives its validators (ETag,
// Last-Modified) and content hash; a 304, or a body whose hash is the stored one, reuses the stored document and
// links instead of converting and extracting the page again. Only under the same document options (optionsHash).
import type { CrawlOptions, PageFetched } from "../../schemas/index.ts";
import { contentHash, optionsHash } from "./change-tracking.ts";
import type { Snapshot, SnapshotStore } from "./snapshot-store.ts";
import { crawlUrlKey } from "../url/normalize-url.ts";

/** What a fetch answered (the Fetcher's result, or the page cache's). */
interface FetchResult {
  statusCode: number;
  body: string;
  bytes?: Buffer;
  etag?: string;
  lastModified?: string;
}

type Freshness = NonNullable<PageFetched["freshness"]>;

/** The options a document depends on: a stored document made under others is not reused. */
export function documentOptionsHash(o: CrawlOptions): string {
  return optionsHash([o.formats, o.json ?? null, o.onlyMainContent, o.includeTags ?? null, o.excludeTags ?? null, o.removeBase64Images ?? true, o.pdf ?? null, o.changeTracking?.trackingJson ?? false]);
}

export interface Previous {
  freshness: Freshness;
  /** the snapshot, when its document can be reused (same options, a document stored) */
  usable: Snapshot | null;
}

/** The freshness of a page of a change-tracking job before any fetch (rendered pages keep only this). */
export function baseFreshness(job: { url: string; urlKey: string; startUrl?: string; options: CrawlOptions }): Freshness | null {
  const ct = job.options.changeTracking;
  if (!ct) return null;
  return {
    tag: ct.tag, urlKey: historyUrlKey(job), modes: ct.modes, optionsHash: documentOptionsHash(job.options), ...(ct.trackingJson ? { trackingJson: true } : {}),
    ...(job.options.kind !== "batch" && job.startUrl ? { origin: crawlUrlKey(job.startUrl, job.options) } : {}),
  };
}

/** A page's key in its history: its URL key (a batch's keys are places in the batch: the key of its URL instead). */
export function historyUrlKey(job: { url: string; urlKey: string; options: CrawlOptions }): string {
  return job.options.kind === "batch" ? crawlUrlKey(job.url, job.options) : job.urlKey;
}

/** The page's history entry, or null when the job does not track changes. */
export async function previousSnapshot(
  snapshots: SnapshotStore | undefined,
  job: { teamId?: string; url: string; urlKey: string; startUrl?: string; options: CrawlOptions },
): Promise<Previous | null> {
  const freshness = baseFreshness(job);
  if (!freshness) return null;
  const key = freshness.urlKey ?? job.urlKey;
  const snap = snapshots ? (await snapshots.latest(job.teamId ?? "", freshness.tag, [key])).get(key) ?? null : null;
  const usable = snap && snap.optionsHash === freshness.optionsHash && snap.doc !== "" && snap.statusCode < 400 ? snap : null;
  return { freshness, usable };
}

/** If-None-Match / If-Modified-Since of a reusable snapshot. */
export function conditionalHeaders(prev: Previous | null): Record<string, string> {
  const s = prev?.usable;
  if (!s) return {};
  return { ...(s.etag ? { "if-none-match": s.etag } : {}), ...(s.lastModified ? { "if-modified-since": s.lastModified } : {}) };
}

/**
 * What the fetch adds to the page's freshness, and the stored document when it did not change (a 304, or the same
 * content hash). A 304 without a reusable snapshot (a server that answers 304 to any conditional request) is not reused.
 */
export function afterFetch(prev: Previous, result: FetchResult): { freshness: Freshness; reuse?: NonNullable<PageFetched["reuse"]> } {
  const s = prev.usable;
  if (result.statusCode === 304 && s) {
    return {
      freshness: { ...prev.freshness, contentHash: s.contentHash, ...validatorsOf(result, s), reused: "not-modified", links: s.links },
      reuse: { document: JSON.parse(s.doc) as NonNullable<PageFetched["reuse"]>["document"], links: s.links, scrapedAt: s.scrapedAt },
    };
  }
  const hash = contentHash(result.bytes ?? result.body);
  const freshness: Freshness = { ...prev.freshness, contentHash: hash, ...validatorsOf(result, null) };
  if (s && s.contentHash === hash && result.statusCode === s.statusCode) {
    return {
      freshness: { ...freshness, reused: "same-hash", links: s.links },
      reuse: { document: JSON.parse(s.doc) as NonNullable<PageFetched["reuse"]>["document"], links: s.links, scrapedAt: s.scrapedAt },
    };
  }
  return { freshness };
}

/** The response's validators; a 304 that sends none keeps the stored ones. */
function validatorsOf(result: FetchResult, stored: Snapshot | null): { etag?: string; lastModified?: string } {
  const etag = result.etag ?? stored?.etag;
  const lastModified = result.lastModified ?? stored?.lastModified;
  return { ...(etag ? { etag } : {}), ...(lastModified ? { lastModified } : {}) };
}
