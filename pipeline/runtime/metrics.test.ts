import { describe, expect, it } from "vitest";
import { Metrics } from "./metrics.ts";

describe("Metrics", () => {
  it("a gauge whose source throws leaves /metrics answering, counts the failure, and reads again on the next scrape", async () => {
    let fail = true;
    const m = new Metrics({
      role: "test",
      queueStats: async () => {
        if (fail) throw new Error("This server is not the leader for that topic-partition");
        return [{ topic: "fetch.tasks", group: "fetch-render", produced: 5, lag: 2, partitions: [{ partition: 0, lag: 2 }] }];
      },
      runningCrawls: async () => {
        if (fail) throw new Error("store away");
        return 3;
      },
    });
    const first = await m.text();
    expect(first).not.toMatch(/^trawl_consumer_lag\{/m);
    // prom-client reads every metric at once, so the count of a scrape's failures shows from the next scrape on
    const again = await m.text();
    expect(again).toMatch(/^trawl_metrics_collect_failures_total\{metric="trawl_consumer_lag",role="test"\} [12]$/m);
    expect(again).toMatch(/^trawl_metrics_collect_failures_total\{metric="trawl_crawls_running",role="test"\} [12]$/m);
    fail = false;
    const second = await m.text();
    expect(second).toContain('trawl_consumer_lag{topic="fetch.tasks",group="fetch-render",partition="0",role="test"} 2');
    expect(second).toContain('trawl_crawls_running{role="test"} 3');
  });
});
