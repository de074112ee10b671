import { describe, expect, it } from "vitest";
import type { CrawlEvent } from "../schemas/index.ts";
import { batchHandler, type RawMessage } from "../pipeline/runtime/batch.ts";
import { jsonWith, type Bus } from "../pipeline/runtime/bus.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { ApiEventsProcessor, EventHub } from "./event-hub.ts";

const document = { markdown: 'a "quoted" {"type":"crawl.page"} line', metadata: { sourceURL: "https://s.test/", url: "https://s.test/", statusCode: 200, scrapeId: "s1" } };
/** A page event as the sink writes it (its head, then the stored document's text). */
const pageEvent = (crawlId: string, seq: number, teamId?: string): string =>
  jsonWith({ crawlId, ...(teamId ? { teamId } : {}), type: "crawl.page", at: 5, seq }, "document", JSON.stringify(document));
const raw = (offset: number, text: string): RawMessage => ({ key: "k", offset: String(offset), value: text });

describe("the API's event feed", () => {
  it("skips page events of crawls nobody here watches, and only those", () => {
    const hub = new EventHub();
    const p = new ApiEventsProcessor(hub);
    expect(p.skip(null, pageEvent("c1", 0, "team-1"))).toBe(true);
    expect(p.skip(null, pageEvent("c1", 0))).toBe(true);
    const stop = hub.subscribe("c1", () => {});
    expect(p.skip(null, pageEvent("c1", 0))).toBe(false);
    expect(p.skip(null, pageEvent("c2", 0))).toBe(true);
    stop();
    expect(p.skip(null, pageEvent("c1", 0))).toBe(true);
    // the end of a crawl, and any layout other than the sink's, are decoded
    expect(p.skip(null, JSON.stringify({ crawlId: "c1", type: "crawl.completed", at: 9 }))).toBe(false);
    expect(p.skip(null, JSON.stringify({ type: "crawl.page", crawlId: "c1", at: 5, seq: 0, document }))).toBe(false);
    expect(p.skip(null, '{"crawlId":"c\\"1","type":"crawl.page"}')).toBe(false);
    expect(p.skip(null, null)).toBe(false);
  });

  it("hands on the events it keeps in order, and counts the skipped ones as done", async () => {
    const hub = new EventHub();
    const seen: string[] = [];
    hub.onEvent((e: CrawlEvent) => seen.push(`every:${e.crawlId}:${e.type}`));
    hub.subscribe("watched", (e: CrawlEvent) => seen.push(`watch:${e.type}:${e.seq ?? ""}`));
    const bus: Bus = { produce: async () => {}, close: async () => {} };
    const handle = batchHandler(new ApiEventsProcessor(hub), bus, createLogger("silent"), new AbortController().signal);
    const messages = [
      raw(0, pageEvent("other", 0)),
      raw(1, pageEvent("watched", 0)),
      raw(2, pageEvent("other", 1)),
      raw(3, JSON.stringify({ crawlId: "other", type: "crawl.completed", at: 9 })),
    ];
    expect(await handle(0, messages)).toBe(4);
    expect(seen).toEqual(["every:watched:crawl.page", "watch:crawl.page:0", "every:other:crawl.completed"]);
  });
});
