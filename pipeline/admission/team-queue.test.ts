import { describe, expect, it } from "vitest";
import type { CrawlOptions } from "../../schemas/index.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { admit, endJob, enqueueJob, queueOf } from "./team-queue.ts";

const options: CrawlOptions = { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true };
const record = (crawlId: string, version: number, teamQueue?: CrawlOptions["teamQueue"]): CrawlRecord => ({
  crawlId, version, teamId: "t", url: "https://s.test/", options: { ...options, ...(teamQueue ? { teamQueue } : {}) }, webhook: "", status: "scraping",
  total: 0, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: false, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 0, error: "",
});

describe("team queue", () => {
  it("runs at most `limit` jobs, the others wait in order and start as slots free", () => {
    const q = queueOf([]);
    enqueueJob(q, "a", 10);
    expect(admit(q, 1, 10, "a")).toEqual([{ crawlId: "a", limited: false, queuedMs: 0 }]);
    enqueueJob(q, "b", 20);
    expect(admit(q, 1, 20, "b")).toEqual([]);
    enqueueJob(q, "c", 30);
    enqueueJob(q, "b", 20); // a replay
    expect(admit(q, 1, 30, "c")).toEqual([]);
    expect(q.waiting.map((w) => w.crawlId)).toEqual(["b", "c"]);
    endJob(q, "a");
    expect(admit(q, 1, 100)).toEqual([{ crawlId: "b", limited: true, queuedMs: 80 }]);
    endJob(q, "c"); // cancelled while waiting
    endJob(q, "b");
    expect(admit(q, 1, 200)).toEqual([]);
    expect(q.running.size).toBe(0);
  });

  it("0 is no limit", () => {
    const q = queueOf([]);
    for (const id of ["a", "b", "c"]) enqueueJob(q, id, 1);
    expect(admit(q, 0, 1).map((a) => a.crawlId)).toEqual(["a", "b", "c"]);
  });

  it("is rebuilt from the crawl records: held ones wait oldest first, admitted and older ones run, version 0 is not seen yet", () => {
    const q = queueOf([
      record("late", 2, { queuedAt: 50 }), record("early", 2, { queuedAt: 40 }), record("running", 3, { queuedAt: 1, admittedAt: 2 }),
      record("before-limits", 5), record("api-only", 0),
    ]);
    expect([...q.running].sort()).toEqual(["before-limits", "running"]);
    expect(q.waiting.map((w) => w.crawlId)).toEqual(["early", "late"]);
    expect(admit(q, 3, 100)).toEqual([{ crawlId: "early", limited: true, queuedMs: 60 }]);
  });
});
