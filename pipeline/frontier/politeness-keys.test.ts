// The frontier keys fetch tasks by host, or by registrable domain with POLITENESS_SCOPE=domain (pipeline/url/politeness-key.ts).
import { describe, expect, it } from "vitest";
import type { CrawlOptions, FrontierInboxMessage } from "../../schemas/index.ts";
import type { Consumed, Emission } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import { FrontierProcessor } from "./frontier.ts";

const options: CrawlOptions = { limit: 100, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const limits = { fetchTimeoutMs: 2000, fetchRetries: 0, retryAfterMaxMs: 0, hostDelayMs: 0, convertTimeoutMs: 3000, llmTimeoutMs: 1000, llmRetries: 0 };

async function fetchTaskKeys(politenessScope?: string): Promise<string[]> {
  const store = await EmbeddedCrawlStore.open(null, 1);
  const frontier = new FrontierProcessor({ store, clock: { now: () => 1000 }, log: createLogger("silent"), limits: { ...limits, ...(politenessScope ? { politenessScope } : {}) } });
  const msg = (value: FrontierInboxMessage): Consumed<FrontierInboxMessage> => ({ topic: "frontier.inbox", partition: 0, offset: "0", key: value.crawlId, value });
  const batch = frontier.createBatch();
  const out: Emission[] = [];
  out.push(...(await frontier.handle(msg({ type: "CrawlRequested", crawlId: "c1", url: "https://docs.example.co.uk/a/", options, createdAt: 1000 }), batch)));
  out.push(...(await frontier.handle(msg({ type: "Admitted", crawlId: "c1", limited: false, queuedMs: 0 }), batch)));
  out.push(...(await frontier.handle(msg({ type: "LinksDiscovered", crawlId: "c1", urlKey: "x", url: "https://docs.example.co.uk/a/", depth: 0, links: ["https://docs.example.co.uk/a/b"] }), batch)));
  return out.filter((e) => e.topic === "fetch.tasks").map((e) => e.key);
}

describe("fetch.tasks keys", () => {
  it("by host (the default): every crawl's tasks of a host share one key, so one fetch-render replica owns the host", async () => {
    const keys = await fetchTaskKeys();
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys)).toEqual(new Set(["docs.example.co.uk"]));
  });

  it("POLITENESS_SCOPE=domain: by registrable domain", async () => {
    const keys = await fetchTaskKeys("domain");
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys)).toEqual(new Set(["example.co.uk"]));
  });
});
