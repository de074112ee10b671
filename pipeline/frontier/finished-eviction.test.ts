// Finished crawls stay in the frontier's memory for late events, up to 1000 of them and FrontierProcessor's
// finishedBytesMax of URL tables together: past that the oldest leave (a late event reads it from the store again),
// the newest always stays.
import { describe, expect, it } from "vitest";
import type { CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { FrontierProcessor } from "./frontier.ts";
import { keyOf } from "./reducer.ts";

const options: CrawlOptions = { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const START = "https://s.test/docs/";
const msg = (value: FrontierInboxMessage): Consumed<FrontierInboxMessage> => ({ topic: "frontier.inbox", partition: 0, offset: "0", key: value.crawlId, value });

async function readsAfterCrawls(finishedBytesMax: number | undefined): Promise<string[]> {
  const store = await EmbeddedCrawlStore.open(null, 1);
  const reads: string[] = [];
  const getCrawl = store.getCrawl.bind(store);
  store.getCrawl = (id: string) => {
    reads.push(id);
    return getCrawl(id);
  };
  const frontier = new FrontierProcessor({ store, clock: { now: () => 1000 }, log: createLogger("silent"), ...(finishedBytesMax !== undefined ? { finishedBytesMax } : {}) });
  for (const crawlId of ["a", "b"]) {
    const batch = frontier.createBatch();
    for (const m of [
      { type: "CrawlRequested", crawlId, url: START, options, createdAt: 1 },
      { type: "Admitted", crawlId, limited: false, queuedMs: 0 },
      { type: "PageDone", crawlId, urlKey: keyOf(START, options), credits: 1 },
    ] as FrontierInboxMessage[]) await frontier.handle(msg(m), batch);
    await frontier.afterPhase(batch, 0);
  }
  reads.length = 0;
  // late events of both finished crawls
  const batch = frontier.createBatch();
  for (const crawlId of ["a", "b"]) await frontier.handle(msg({ type: "PageDone", crawlId, urlKey: keyOf(START, options), credits: 1 }), batch);
  return reads;
}

describe("finished crawls in the frontier's memory", () => {
  it("stay while their URL tables fit, the oldest leave past finishedBytesMax, the newest stays", async () => {
    expect(await readsAfterCrawls(undefined)).toEqual([]);
    expect(await readsAfterCrawls(1)).toEqual(["a"]);
  });
});
