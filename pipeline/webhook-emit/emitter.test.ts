import { describe, expect, it } from "vitest";
import type { CrawlEvent } from "../../schemas/index.ts";
import { jsonWith, type Consumed } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { WebhookEmitter } from "./emitter.ts";

const crawl = (crawlId: string, webhook: string): CrawlRecord => ({
  crawlId, version: 1, teamId: "t", url: "https://s.test/", webhook, status: "scraping", total: 1, completed: 0, failed: 0, creditsUsed: 0,
  tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "",
  options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
});
const document = { markdown: "# page", metadata: { sourceURL: "https://s.test/", url: "https://s.test/", statusCode: 200, scrapeId: "s1" } };
/** A page event as the sink writes it: its head, then the stored document's text. */
const pageText = (crawlId: string, seq: number) => jsonWith({ crawlId, type: "crawl.page", at: 5, seq }, "document", JSON.stringify(document));
const consumed = (text: string): Consumed<CrawlEvent> => ({ topic: "crawl.events", partition: 0, offset: "0", key: "", value: JSON.parse(text) as CrawlEvent });

describe("webhook emitter", () => {
  it("skips undecoded the events of a crawl it knows has no webhook, and nothing else", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([crawl("plain", ""), crawl("hooked", JSON.stringify({ url: "https://hooks.test/h" }))]);
    const emitter = new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
    // not looked up yet: decoded and handled
    expect(emitter.skip("plain", pageText("plain", 0))).toBe(false);
    const handle = async (text: string) => emitter.handle(consumed(text), emitter.createBatch());
    expect(await handle(pageText("plain", 0))).toEqual([]);
    expect((await handle(pageText("hooked", 0))).map((e) => e.topic)).toEqual(["webhook.deliveries"]);

    expect(emitter.skip("plain", pageText("plain", 1))).toBe(true);
    expect(emitter.skip("plain", JSON.stringify({ crawlId: "plain", type: "crawl.completed", at: 9 }))).toBe(true);
    expect(emitter.skip("hooked", pageText("hooked", 1))).toBe(false);
    // the key names a crawl without a webhook, the event another crawl: decoded
    expect(emitter.skip("plain", pageText("hooked", 2))).toBe(false);
    expect(emitter.skip("plain", `{"type":"crawl.page","crawlId":"plain"}`)).toBe(false);
    expect(emitter.skip(null, pageText("plain", 2))).toBe(false);
    expect(emitter.skip("plain", null)).toBe(false);
  });

  it("hands a page event replayed under the same seq once, also from a fresh process after the first logged it", async () => {
    const store = await EmbeddedCrawlStore.open(null, 1);
    await store.saveCrawls([crawl("c", JSON.stringify({ url: "https://hooks.test/h" }))]);
    const emitterOf = () => new WebhookEmitter({ store, clock: { now: () => 10 }, log: createLogger("silent"), secret: "s" });
    const run = async (emitter: WebhookEmitter, texts: string[]) => {
      const batch = emitter.createBatch();
      const out = [];
      for (const t of texts) out.push(...(await emitter.handle(consumed(t), batch)));
      await emitter.afterProduce(batch);
      return out.map((e) => e.topic);
    };
    // the sink's replay of a stored page sends its event again under the seq it was stored at
    expect(await run(emitterOf(), [pageText("c", 0), pageText("c", 0), pageText("c", 1)])).toEqual(["webhook.deliveries", "webhook.deliveries"]);
    expect(await run(emitterOf(), [pageText("c", 1), pageText("c", 0), pageText("c", 2)])).toEqual(["webhook.deliveries"]);
  });
});
