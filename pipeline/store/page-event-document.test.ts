import { describe, expect, it } from "vitest";
import type { CrawlEvent } from "../../schemas/index.ts";
import { classify } from "../runtime/errors.ts";
import type { CrawlRecord } from "./crawl-store.ts";
import { EmbeddedCrawlStore } from "./embedded-crawl-store.ts";
import { needsStoredDocument, storedDocuments, withStoredDocument } from "./page-event-document.ts";

const record = (crawlId: string): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook: "", status: "scraping", total: 1, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0,
  discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const doc = (n: number) => JSON.stringify({ markdown: `page ${n}`, metadata: { url: `https://s.test/${n}`, sourceURL: `https://s.test/${n}`, scrapeId: `s${n}`, statusCode: 200 } });
const row = (crawlId: string, seq: number) => ({ crawlId, seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: `s${seq}`, url: `https://s.test/${seq}`, statusCode: 200, credits: 1, storedAt: 1, doc: doc(seq) });
const lean = (crawlId: string, seq: number): CrawlEvent => ({ crawlId, type: "crawl.page", at: 1, seq, urlKey: `k${seq}` });

describe("the stored document of a page event", () => {
  it("is read only for page events that carry none", async () => {
    expect(needsStoredDocument(lean("c", 0))).toBe(true);
    expect(needsStoredDocument({ ...lean("c", 0), document: JSON.parse(doc(0)) })).toBe(false);
    expect(needsStoredDocument({ crawlId: "c", type: "crawl.completed", at: 1 })).toBe(false);
  });

  it("is the document stored under the event's seq, not the next one", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c")]);
    await store.insertDocuments([row("c", 0), row("c", 1), row("c", 3)]);
    expect((await withStoredDocument(store, lean("c", 1)))?.document?.markdown).toBe("page 1");
    // seq 2 is not readable (a replica behind): a retriable store error, never page 3's document
    const err = await withStoredDocument(store, lean("c", 2)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(classify(err)).toBe("retry");
    // a crawl the store no longer has (expired): nothing to send
    expect(await withStoredDocument(store, lean("gone", 0))).toBeNull();
  });

  it("of a batch: one read per crawl for its range of seqs, kept only when the store shows every seq of it", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("a"), record("b")]);
    await store.insertDocuments([row("a", 0), row("a", 1), row("a", 2), row("b", 0), row("b", 2)]);
    let reads = 0;
    const pageDocuments = store.pageDocuments.bind(store);
    store.pageDocuments = async (...args) => (reads++, pageDocuments(...args));
    const events = [lean("a", 2), lean("a", 0), lean("b", 0), lean("b", 2), { crawlId: "a", type: "crawl.completed", at: 2 } as CrawlEvent];
    const docs = await storedDocuments(store, events);
    expect(reads).toBe(2);
    // b's seq 1 is missing: none of b is taken from the range (each is read alone, and checked, when handled)
    expect([...docs.keys()].sort()).toEqual(["0:a", "1:a", "2:a"]);
    reads = 0;
    expect((await withStoredDocument(store, lean("a", 2), docs))?.document?.markdown).toBe("page 2");
    expect((await withStoredDocument(store, lean("b", 2), docs))?.document?.markdown).toBe("page 2");
    expect(reads).toBe(1);
  });
});
