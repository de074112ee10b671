// A crawl.page event without its document (the sink's CRAWL_EVENTS_DOCUMENT=false) gets it back from the store: the
// sink stores a page's document before it produces the page's event, under the event's seq. Used by the readers of
// crawl.events that need the document (webhook-emit's page webhooks, the API's WebSocket watchers).
import type { CrawlEvent, PageDocument } from "../../schemas/index.ts";
import { InfrastructureError } from "../runtime/errors.ts";
import type { CrawlStore } from "./crawl-store.ts";

/** A page event that names its page by seq and carries no document. */
export function needsStoredDocument(e: CrawlEvent): boolean {
  return e.type === "crawl.page" && e.document === undefined && e.seq !== undefined;
}

const docKey = (crawlId: string, seq: number) => `${seq}:${crawlId}`;

/**
 * The stored documents of a batch's page events, one read per crawl: the range from its lowest to its highest seq,
 * kept only when the store shows every seq of it (the sink gives a crawl's pages consecutive seqs); otherwise that
 * crawl's events are read one by one by withStoredDocument.
 */
export async function storedDocuments(store: CrawlStore, events: CrawlEvent[]): Promise<Map<string, string>> {
  const seqs = new Map<string, number[]>();
  for (const e of events) if (needsStoredDocument(e)) seqs.set(e.crawlId, [...(seqs.get(e.crawlId) ?? []), e.seq as number]);
  const docs = new Map<string, string>();
  for (const [crawlId, list] of seqs) {
    if (list.length < 2) continue;
    const from = Math.min(...list);
    const count = Math.max(...list) - from + 1;
    const page = await store.pageDocuments(crawlId, from, Number.MAX_SAFE_INTEGER, count);
    if (page.docs.length !== count || page.nextSkip !== from + count) continue;
    page.docs.forEach((doc, i) => docs.set(docKey(crawlId, from + i), doc));
  }
  return docs;
}

/**
 * The event with its stored document (from `known`, what storedDocuments read for its batch, or read now); null when
 * the crawl is gone (expired, or never stored in this store). A crawl that exists without the document at that seq is
 * a replica that has not caught up yet: a retriable STORE_UNAVAILABLE (the reader retries its batch without committing).
 */
export async function withStoredDocument(store: CrawlStore, e: CrawlEvent, known?: Map<string, string>): Promise<CrawlEvent | null> {
  if (!needsStoredDocument(e)) return e;
  const seq = e.seq as number;
  const text = known?.get(docKey(e.crawlId, seq));
  if (text !== undefined) return { ...e, document: JSON.parse(text) as PageDocument };
  const page = await store.pageDocuments(e.crawlId, seq, Number.MAX_SAFE_INTEGER, 1);
  const doc = page.docs[0];
  // nextSkip is the seq after the one shown: a later page's document is not this event's
  if (doc !== undefined && page.nextSkip === seq + 1) return { ...e, document: JSON.parse(doc) as PageDocument };
  if (!(await store.getCrawl(e.crawlId))) return null;
  throw new InfrastructureError("STORE_UNAVAILABLE", `document ${seq} of crawl ${e.crawlId} is not readable yet (its page event came first)`);
}
