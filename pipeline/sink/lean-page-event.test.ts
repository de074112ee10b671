// CRAWL_EVENTS_DOCUMENT=false: the sink's page event names its page (seq, urlKey) without the document, and the
// readers that need the document (webhook-emit's page webhooks, the API's watchers) get the stored one, the same as
// the event would have carried.
import { describe, expect, it } from "vitest";
import { validator, type CrawlEvent, type CrawlPage, type WebhookDelivery } from "../../schemas/index.ts";
import type { Consumed, Emission } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { CancelCache } from "../store/cancel-cache.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { ApiEventsProcessor, EventHub } from "../../api/event-hub.ts";
import { WebhookEmitter } from "../webhook-emit/emitter.ts";
import { SinkProcessor } from "./sink.ts";
import { runSinkBatch } from "./run-batch.testing.ts";

const document = { markdown: 'quote " and ünï', metadata: { url: "https://s.test/p1", sourceURL: "https://s.test/p1", scrapeId: "s1", statusCode: 200, title: "P1" } };
const page = (crawlId: string, urlKey: string, doc: CrawlPage["document"] = document): Consumed<CrawlPage> => ({
  topic: "crawl.pages", partition: 0, offset: "0", key: crawlId, value: { crawlId, teamId: "t", urlKey, credits: 1, document: doc },
});
const record = (crawlId: string, webhook: string): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook, status: "scraping", total: 1, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0,
  discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const asConsumed = (e: Emission): Consumed<CrawlEvent> => ({ topic: "crawl.events", partition: 0, offset: "0", key: e.key, value: e.value as CrawlEvent });
const sinkOf = (store: EmbeddedCrawlStore, eventDocument: boolean) =>
  new SinkProcessor({ store, cancels: new CancelCache(store, 0, () => 7), clock: { now: () => 7 }, log: createLogger("silent"), eventDocument });
const eventsOf = (out: Emission[]) => out.filter((e) => e.topic === "crawl.events");

describe("page events without the document (CRAWL_EVENTS_DOCUMENT=false)", () => {
  it("name the page by seq and urlKey, match the public schema, and are far smaller than the document", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c", "")]);
    const [full] = eventsOf(await runSinkBatch(sinkOf(store, true), [page("c", "p0")]));
    const [lean] = eventsOf(await runSinkBatch(sinkOf(store, false), [page("c", "p1")]));
    expect(lean?.value).toEqual({ crawlId: "c", teamId: "t", type: "crawl.page", at: 7, seq: 1, urlKey: "p1" });
    expect(lean?.json).toBeUndefined();
    expect(validator("crawl-event")(lean?.value)).toBe(true);
    const text = JSON.stringify(lean?.value);
    expect(text.length).toBeLessThan((full?.json ?? "").length - JSON.stringify(document).length + 20);
    // still the layout the API's feed and webhook-emit recognise before decoding (the crawl's id first, then the type)
    expect(new ApiEventsProcessor(new EventHub()).skip(null, text)).toBe(true);
    // the document is stored before the event, as before
    expect((await store.pageDocuments("c", 1, 1e9, 1)).docs).toEqual([JSON.stringify(document)]);
  });

  it("a replay of a stored page announces it again under its seq without reading the document back", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c", "")]);
    await runSinkBatch(sinkOf(store, false), [page("c", "p1"), page("c", "p2")]);
    let reads = 0;
    const pageDocuments = store.pageDocuments.bind(store);
    store.pageDocuments = async (...args) => (reads++, pageDocuments(...args));
    const again = eventsOf(await runSinkBatch(sinkOf(store, false), [page("c", "p2")]));
    expect(again.map((e) => e.value)).toEqual([{ crawlId: "c", teamId: "t", type: "crawl.page", at: 7, seq: 1, urlKey: "p2" }]);
    expect(reads).toBe(0);
  });

  it("webhook-emit sends the same page webhook body as for an event that carries the document", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("full", JSON.stringify({ url: "https://hooks.test/h" })), record("lean", JSON.stringify({ url: "https://hooks.test/h" }))]);
    const bodyOf = async (crawlId: string, eventDocument: boolean) => {
      const [event] = eventsOf(await runSinkBatch(sinkOf(store, eventDocument), [page(crawlId, "p1")]));
      const emitter = new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
      const [delivery] = await emitter.handle(asConsumed(event as Emission), emitter.createBatch());
      return JSON.parse((delivery?.value as WebhookDelivery).body);
    };
    const full = await bodyOf("full", true);
    const lean = await bodyOf("lean", false);
    expect(lean.data).toEqual([document]);
    expect({ ...lean, id: "x" }).toEqual({ ...full, id: "x" });
  });

  it("webhook-emit reads the documents of a lane's page events in one read, and sends each its own", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c", JSON.stringify({ url: "https://hooks.test/h" }))]);
    const msgs = ["p1", "p2", "p3"].map((k) => page("c", k, { ...document, markdown: k }));
    const events = eventsOf(await runSinkBatch(sinkOf(store, false), msgs)).map(asConsumed);
    let reads = 0;
    const pageDocuments = store.pageDocuments.bind(store);
    store.pageDocuments = async (...args) => (reads++, pageDocuments(...args));
    const emitter = new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
    const batch = emitter.createBatch();
    await emitter.prepare(events, batch);
    const out = [];
    for (const e of events) out.push(...(await emitter.handle(e, batch)));
    expect(reads).toBe(1);
    expect(out.map((d) => JSON.parse((d.value as WebhookDelivery).body).data[0].markdown)).toEqual(["p1", "p2", "p3"]);
  });

  it("a monitor's check sends monitor.page from the stored document's changeTracking", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("check", JSON.stringify({ url: "https://hooks.test/m", monitor: "m1" }))]);
    const tracked = { ...document, changeTracking: { changeStatus: "new", previousScrapeAt: null, visibility: "visible" } } as unknown as CrawlPage["document"];
    const [event] = eventsOf(await runSinkBatch(sinkOf(store, false), [page("check", "p1", tracked)]));
    const emitter = new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
    const [delivery] = await emitter.handle(asConsumed(event as Emission), emitter.createBatch());
    const body = JSON.parse((delivery?.value as WebhookDelivery).body);
    expect(body).toMatchObject({ type: "monitor.page", data: [{ monitorId: "m1", checkId: "check", url: "https://s.test/p1", status: "new", currentScrapeId: "s1" }] });
  });

  it("webhook-emit does not read the document for a webhook that sends no page events", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c", JSON.stringify({ url: "https://hooks.test/h", events: ["completed"] }))]);
    const [event] = eventsOf(await runSinkBatch(sinkOf(store, false), [page("c", "p1")]));
    let reads = 0;
    const pageDocuments = store.pageDocuments.bind(store);
    store.pageDocuments = async (...args) => (reads++, pageDocuments(...args));
    const emitter = new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
    expect(await emitter.handle(asConsumed(event as Emission), emitter.createBatch())).toEqual([]);
    expect(reads).toBe(0);
  });

  it("the API's feed hands watchers the stored document, and reads nothing for a crawl nobody here watches", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([record("c", "")]);
    const events = eventsOf(await runSinkBatch(sinkOf(store, false), [page("c", "p1"), page("c", "p2", { ...document, markdown: "second" })]));
    const hub = new EventHub();
    const feed = new ApiEventsProcessor(hub, store);
    const every: CrawlEvent[] = [];
    hub.onEvent((e) => every.push(e));
    await feed.handle(asConsumed(events[0] as Emission));
    expect(every[0]?.document).toBeUndefined();
    const watched: CrawlEvent[] = [];
    hub.subscribe("c", (e) => watched.push(e));
    await feed.handle(asConsumed(events[1] as Emission));
    expect(watched.map((e) => [e.seq, e.document?.markdown])).toEqual([[1, "second"]]);
  });
});
