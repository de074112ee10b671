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

/**
 * The event with its stored document; null when the crawl is gone (expired, or never stored in this store). A crawl
 * that exists without the document at that seq is a replica that has not caught up yet: a retriable STORE_UNAVAILABLE
 * (the reader retries its batch without committing).
 */
export async function withStoredDocument(store: CrawlStore, e: CrawlEvent): Promise<CrawlEvent | null> {
  if (!needsStoredDocument(e)) return e;
  const seq = e.seq as number;
  const page = await store.pageDocuments(e.crawlId, seq, Number.MAX_SAFE_INTEGER, 1);
  const doc = page.docs[0];
  // nextSkip is the seq after the one shown: a later page's document is not this event's
  if (doc !== undefined && page.nextSkip === seq + 1) return { ...e, document: JSON.parse(doc) as PageDocument };
  if (!(await store.getCrawl(e.crawlId))) return null;
  throw new InfrastructureError("STORE_UNAVAILABLE", `document ${seq} of crawl ${e.crawlId} is not readable yet (its page event came first)`);
}
