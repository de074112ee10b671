// The fetch-render processor's handling of fetch.tasks keys and of a host's turn that does not come, with a fake fetcher.
import { describe, expect, it } from "vitest";
import type { CrawlOptions, FetchTask } from "../../schemas/index.ts";
import type { Consumed } from "../runtime/bus.ts";
import { createLogger } from "../runtime/logger.ts";
import { CancelCache } from "../store/cancel-cache.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { keys } from "../topology.ts";
import type { PolitenessScope } from "../url/politeness-key.ts";
import { FetchRenderProcessor } from "./fetch-render.ts";
import type { Fetcher, FetchRequest } from "./fetcher.ts";
import { HostLimits } from "./host-limit.ts";
import { Politeness } from "./politeness.ts";
import { RobotsCache } from "./robots.ts";

const options: CrawlOptions = { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };

function processor(opts: { scope?: PolitenessScope; hostWaitMaxMs?: number; stopping?: AbortSignal; cancelled?: Set<string> } = {}) {
  const fetched: string[] = [];
  const fetcher: Fetcher = {
    async fetch(req: FetchRequest) {
      if (req.url.endsWith("/robots.txt")) return { url: req.url, finalUrl: req.url, statusCode: 404, contentType: "text/plain", body: "" };
      fetched.push(req.url);
      return { url: req.url, finalUrl: req.url, statusCode: 200, contentType: "text/html", body: "<html><body>hi</body></html>", headersMs: 1 };
    },
    close: async () => {},
  };
  const politeness = new Politeness();
  const p = new FetchRenderProcessor({
    fetcher,
    robots: new RobotsCache({ fetcher, ttlMs: 60_000, timeoutMs: 1000, now: Date.now }),
    politeness,
    cancels: opts.cancelled
      ? new CancelCache({ cancelled: async (ids: string[]) => ids.filter((id) => opts.cancelled?.has(id)) } as unknown as CrawlStore, 0, Date.now)
      : new CancelCache({ cancelled: async () => [] } as unknown as CrawlStore, 1000, Date.now),
    log: createLogger("silent"),
    defaultTimeoutMs: 5000,
    retries: 0,
    retryAfterMaxMs: 30_000,
    robotsUserAgent: "TrawlBot",
    hosts: new HostLimits({ initial: 4, ceiling: 4 }),
    hostDelayMs: 0,
    maxSitemaps: 0,
    sitemapMaxBytes: 1024,
    ...(opts.scope ? { politenessScope: opts.scope } : {}),
    ...(opts.hostWaitMaxMs ? { hostWaitMaxMs: opts.hostWaitMaxMs } : {}),
    ...(opts.stopping ? { stopping: opts.stopping } : {}),
  }, 100);
  return { p, politeness, fetched };
}

function message(url: string, key: string, offset = "7"): Consumed<FetchTask> {
  const task: FetchTask = { crawlId: "c1", url, urlKey: url, depth: 1, attempt: 0, options, kind: "page", startUrl: url };
  return { topic: "fetch.tasks", partition: 0, offset, key, value: task };
}

describe("FetchRenderProcessor", () => {
  it("runs a lane per task (keyed mode: each task is done on its own)", () => {
    const { p } = processor();
    expect(p.mode).toBe("keyed");
    expect(p.lane(message("http://a.test/x", "a.test", "41"))).not.toBe(p.lane(message("http://a.test/y", "a.test", "42")));
  });

  it("a task keyed crawl + host (written before fetch.tasks was keyed by host) is fetched as any other", async () => {
    const { p, fetched } = processor();
    const msg = message("http://a.test/page", keys.crawlHost("c1", "http://a.test/page"));
    const out = await p.handle(msg, p.createBatch());
    expect(fetched).toEqual(["http://a.test/page"]);
    expect(out.map((e) => e.topic)).toEqual(["pages.fetched"]);
  });

  it("a task whose host's turn does not come within HOST_WAIT_MAX_MS goes back to fetch.tasks, keyed by its host", async () => {
    const { p, politeness, fetched } = processor({ hostWaitMaxMs: 100 });
    politeness.holdFor("host:a.test:8080", 10_000); // a Retry-After of the host
    const msg = message("http://a.test:8080/page", keys.crawlHost("c1", "http://a.test:8080/page"));
    const out = await p.handle(msg, p.createBatch());
    expect(fetched).toEqual([]);
    expect(out).toEqual([{ topic: "fetch.tasks", key: "a.test:8080", value: msg.value }]);
  });

  it("POLITENESS_SCOPE=domain: the hosts of one registrable domain share a gate; a task sent back is keyed by the domain", async () => {
    const { p, politeness } = processor({ scope: "domain", hostWaitMaxMs: 100 });
    politeness.holdFor("host:example.co.uk", 10_000);
    const msg = message("https://docs.example.co.uk/page", "docs.example.co.uk");
    const out = await p.handle(msg, p.createBatch());
    expect(out).toEqual([{ topic: "fetch.tasks", key: "example.co.uk", value: msg.value }]);
  });

  it("a rebalance: a task waiting for its host gives up with nothing to produce (its partition starts over)", async () => {
    const { p, politeness, fetched } = processor();
    politeness.holdFor("host:a.test", 10_000);
    const pending = p.handle(message("http://a.test/page", "a.test"), p.createBatch());
    await new Promise((r) => setTimeout(r, 20));
    p.onPartitionsAssigned();
    expect(await pending).toEqual([]);
    expect(fetched).toEqual([]);
  });

  it("a crawl cancelled while its task waits for its host's turn: the task is dropped when its turn comes, not fetched", async () => {
    const cancelled = new Set<string>();
    const { p, politeness, fetched } = processor({ cancelled });
    politeness.holdFor("host:a.test", 100);
    const pending = p.handle(message("http://a.test/page", "a.test"), p.createBatch());
    await new Promise((r) => setTimeout(r, 20));
    cancelled.add("c1");
    expect(await pending).toEqual([]);
    expect(fetched).toEqual([]);
    expect(politeness.running("host:a.test")).toBe(0);
  });

  it("a stop: a task waiting for its host fails retriably (not done: fetched after the restart), the stop does not wait for its turn", async () => {
    const stopping = new AbortController();
    const { p, politeness, fetched } = processor({ stopping: stopping.signal });
    politeness.holdFor("host:a.test", 60_000);
    const pending = p.handle(message("http://a.test/page", "a.test"), p.createBatch());
    await new Promise((r) => setTimeout(r, 20));
    stopping.abort();
    await expect(pending).rejects.toMatchObject({ code: "FETCH_INTERRUPTED", retriable: true });
    expect(fetched).toEqual([]);
  });
});
