// Builds a crawl's URL listing (url-listing.ts) from its URL rows without holding the event loop: the rows are merged
// a written batch at a time, sorted by sortChunked, and turned into the listing's lines a slice at a time. Built in
// one task, a million URLs held the loop for seconds (every status read and the crawl's own I/O waited).
import { sortChunked } from "../runtime/chunked-sort.ts";
import { turn } from "../runtime/yield-turn.ts";
import { mergeUrlRow, type CrawlRecord, type UrlRow } from "./crawl-store.ts";
import { byDepthThenUrl, entryCode, unlistedFrom, urlEntry } from "./url-entry.ts";
import type { ListingItem } from "./url-listing.ts";
import type { UrlReason } from "./url-reason.ts";

const SLICE = 2048;

/** The listing items of `crawl` (its rows merged by URL key, by depth then URL) and the skipped URLs not listed. */
export async function buildListingItems(batches: AsyncIterable<UrlRow[]>, crawl: Pick<CrawlRecord, "crawlId" | "status" | "reasons">): Promise<{ items: ListingItem[]; unlisted: number }> {
  const latest = new Map<string, UrlRow>();
  let n = 0;
  for await (const rows of batches) {
    for (const r of rows) {
      if (r.crawlId !== crawl.crawlId) continue;
      latest.set(r.urlKey, mergeUrlRow(latest.get(r.urlKey), r));
      if (++n % SLICE === 0) await turn();
    }
  }
  const merged: UrlRow[] = [];
  for (const r of latest.values()) {
    merged.push(r);
    if (merged.length % SLICE === 0) await turn();
  }
  latest.clear();
  // a crawled URL past the bound has lost its URL once ClickHouse merged its rows (only the latest one is kept)
  const rows = merged.filter((r) => r.url);
  const urlless = merged.length - rows.length;
  await sortChunked(rows, byDepthThenUrl);
  const items: ListingItem[] = new Array(rows.length);
  const skipped = new Map<UrlReason, number>();
  for (let i = 0; i < rows.length; i++) {
    const e = urlEntry(rows[i] as UrlRow, crawl);
    if (e.state === "skipped") skipped.set(e.reason, (skipped.get(e.reason) ?? 0) + 1);
    items[i] = { json: JSON.stringify(e), code: entryCode(e) };
    if (i % SLICE === SLICE - 1) await turn();
  }
  return { items, unlisted: unlistedFrom(crawl.reasons, (r) => skipped.get(r) ?? 0) + urlless };
}
