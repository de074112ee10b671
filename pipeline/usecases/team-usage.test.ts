import { describe, expect, it } from "vitest";
import { RequestError } from "../runtime/errors.ts";
import { EmbeddedAuthStore } from "../store/embedded-auth-store.ts";
import { EmbeddedCrawlStore } from "../store/embedded-crawl-store.ts";
import type { CrawlRecord } from "../store/crawl-store.ts";
import { checkByApiKey, concurrency, queueStatus, tokenUsage, usageHistory, UNLIMITED } from "./team-usage.ts";
import { ledgerRows } from "./credits.ts";

const crawl = (id: string, teamId: string, over: Partial<CrawlRecord>): CrawlRecord => ({
  crawlId: id, version: 1, teamId, url: "https://s.test/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
  webhook: "", status: "completed", total: 0, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: true,
  createdAt: Date.parse("2026-05-10T00:00:00Z"), updatedAt: 0, completedAt: 0, expiresAt: 1e15, error: "", ...over,
});

describe("team usage", () => {
  it("sums the tokens of the team's crawls and ledger, a crawl still stored winning over its ledger row", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    const authStore = await EmbeddedAuthStore.open(null);
    const clock = { now: () => Date.parse("2026-06-01T00:00:00Z") };
    await store.saveCrawls([crawl("c1", "t1", { creditsUsed: 10, tokensUsed: 400 }), crawl("c2", "t2", { creditsUsed: 3, tokensUsed: 99 })]);
    await authStore.recordUsage([
      { teamId: "t1", jobId: "s1", credits: 5, tokens: 60, at: Date.parse("2026-04-02T00:00:00Z") },
      { teamId: "t1", jobId: "m1", credits: 1, at: Date.parse("2026-04-03T00:00:00Z") },
      // the ledger row of c1 written by a retention sweep racing a read: not counted twice
      ...ledgerRows([{ crawlId: "c1", teamId: "t1", creditsUsed: 10, tokensUsed: 400, createdAt: Date.parse("2026-05-10T00:00:00Z") }]),
    ]);
    const deps = { store, authStore, clock };
    expect(await tokenUsage(deps, "t1")).toMatchObject({ tokensUsed: 460, remainingTokens: UNLIMITED - 460, planTokens: UNLIMITED });
    expect(await usageHistory(deps, "t1", "tokens")).toEqual([
      { startDate: "2026-04-01T00:00:00.000Z", endDate: "2026-04-30T23:59:59.999Z", tokensUsed: 60 },
      { startDate: "2026-05-01T00:00:00.000Z", endDate: "2026-05-31T23:59:59.999Z", tokensUsed: 400 },
    ]);
    expect(await usageHistory(deps, "t1", "credits")).toEqual([
      { startDate: "2026-04-01T00:00:00.000Z", endDate: "2026-04-30T23:59:59.999Z", creditsUsed: 6 },
      { startDate: "2026-05-01T00:00:00.000Z", endDate: "2026-05-31T23:59:59.999Z", creditsUsed: 10 },
    ]);
    expect(await tokenUsage(deps, "t2")).toMatchObject({ tokensUsed: 99 });
  });

  it("counts queue and concurrency from the caller's running jobs only", async () => {
    const store = await EmbeddedCrawlStore.open(null, 0);
    await store.saveCrawls([
      crawl("a", "t1", { status: "scraping", total: 30, completed: 4 }),
      crawl("b", "t1", { status: "scraping", total: 5, completed: 5 }),
      crawl("c", "t1", { status: "completed", total: 50, completed: 10 }),
      crawl("d", "t2", { status: "scraping", total: 7, completed: 0 }),
    ]);
    const deps = { store, clock: { now: () => 0 } };
    expect(await queueStatus(deps, "t1", 10)).toEqual({ jobsInQueue: 26, activeJobsInQueue: 10, waitingJobsInQueue: 16, maxConcurrency: 10, mostRecentSuccess: null });
    expect(await queueStatus(deps, "t2", 10)).toMatchObject({ jobsInQueue: 7, activeJobsInQueue: 7, waitingJobsInQueue: 0 });
    expect(await concurrency(deps, "t2", 10)).toEqual({ concurrency: 7, maxConcurrency: 10 });
    expect(await concurrency(deps, "nobody", 10)).toEqual({ concurrency: 0, maxConcurrency: 10 });
    await store.cancelCrawl("d", 1);
    expect(await concurrency(deps, "t2", 10)).toEqual({ concurrency: 0, maxConcurrency: 10 });
  });

  it("refuses byApiKey=true (usage is per team) and values other than true / false", () => {
    expect(() => checkByApiKey(undefined)).not.toThrow();
    expect(() => checkByApiKey("false")).not.toThrow();
    expect(() => checkByApiKey("true")).toThrow(RequestError);
    expect(() => checkByApiKey(["true", "true"])).toThrow(/true or false/);
  });
});
