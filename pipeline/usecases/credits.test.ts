import { describe, expect, it } from "vitest";
import type { CrawlOptions } from "../../schemas/index.ts";
import type { AuthStore } from "../store/auth-store.ts";
import type { CrawlRecord, CrawlStore, JobUsage } from "../store/crawl-store.ts";
import { creditsCommitted, remainingCredits } from "./credits.ts";

const options = (maxCredits?: number): CrawlOptions => ({ limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, ...(maxCredits ? { maxCredits } : {}) });
const usage = (credits: number): JobUsage => ({ credits, tokens: 0, at: 1 });

/** The three reads credits.ts makes, over fixed rows. */
function stores(running: { crawlId: string; maxCredits?: number; creditsUsed: number }[], crawls: Record<string, number>, ledger: Record<string, number>) {
  const store = {
    activeCrawls: async () => running.map((c) => ({ crawlId: c.crawlId, options: options(c.maxCredits), creditsUsed: c.creditsUsed }) as CrawlRecord),
    usageByCrawl: async () => new Map(Object.entries(crawls).map(([id, n]) => [id, usage(n)])),
  } as unknown as CrawlStore;
  const auth = { usage: async () => new Map(Object.entries(ledger).map(([id, n]) => [id, usage(n)])) } as unknown as AuthStore;
  return { store, auth };
}

describe("credits committed", () => {
  it("counts what jobs used and what running crawls with a budget may still use", async () => {
    const deps = stores([{ crawlId: "c1", maxCredits: 10, creditsUsed: 3 }, { crawlId: "c2", creditsUsed: 4 }], { c1: 3, c2: 4, ended: 6 }, { scrape: 2, ended: 6 });
    // used: 3 + 4 + 6 + 2 (the ended crawl once); c1 may still use 7; c2 has no budget
    expect(await creditsCommitted(deps, "t")).toBe(22);
    expect(await remainingCredits(deps, "t", [{ teamId: "t", credits: 30 } as never])).toBe(8);
    expect(await remainingCredits(deps, "t", [{ teamId: "t", credits: 20 } as never])).toBe(0);
    expect(await remainingCredits(deps, "t", [{ teamId: "t", credits: -1 } as never])).toBe(Infinity);
  });

  it("counts a crawl that ended between the two reads by its budget: its use is read after it", async () => {
    // listed as running with 2 used, its usage read afterwards says 9 (it used more, then ended)
    const deps = stores([{ crawlId: "c1", maxCredits: 10, creditsUsed: 2 }], { c1: 9 }, {});
    expect(await creditsCommitted(deps, "t")).toBe(10);
  });
});
