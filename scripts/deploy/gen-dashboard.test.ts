// The Grafana dashboard is up to date, and every trawl_* series its queries use is one the process exports.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Metrics } from "../../pipeline/runtime/metrics.ts";
import { dashboard, DASHBOARD_PATH } from "./gen-dashboard.ts";

describe("grafana dashboard", () => {
  it("deploy/grafana-dashboard.json is generated from gen-dashboard.ts", () => {
    expect(JSON.parse(readFileSync(DASHBOARD_PATH, "utf8"))).toEqual(dashboard());
  });

  it("queries only metrics that /metrics serves", async () => {
    const metrics = new Metrics({ role: "all", queueStats: async () => [{ topic: "fetch.tasks", group: "g", produced: 1, lag: 1, partitions: [{ partition: 0, lag: 1 }] }], runningCrawls: async () => 1 });
    metrics.pagesFetched.inc({ outcome: "ok" });
    metrics.fetchSeconds.observe({ outcome: "ok" }, 0.1);
    metrics.pagesConverted.inc({ outcome: "ok" });
    metrics.pagesStored.inc({ outcome: "stored" });
    metrics.webhookAttempts.inc({ result: "ok" });
    metrics.crawlsEnded.inc({ status: "completed" });
    metrics.renderSeconds.observe({ outcome: "ok" }, 1);
    metrics.renderRefused.inc({ reason: "ad" });
    const text = await metrics.text();
    const served = new Set(text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split(/[{ ]/)[0]));
    const used = JSON.stringify(dashboard()).match(/\b(trawl|process|nodejs)_[a-z0-9_]+/g) ?? [];
    expect(used.length).toBeGreaterThan(10);
    for (const name of new Set(used)) expect(served, name).toContain(name);
  });
});
