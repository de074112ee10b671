// A crawl's credit budget (TeamAccess.admitJob) with a real embedded auth store: the credits left, up to
// CREDIT_BUDGET_PER_PAGE per page of the crawl's limit, held from the team's other jobs while it is admitted.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EmbeddedAuthStore } from "../store/embedded-auth-store.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import type { CrawlOptions } from "../../schemas/index.ts";
import { CreditsError, TeamAccess } from "./team-access.ts";

// no crawl in the store: what is left is the balance minus this process's holds
const noCrawls = { activeCrawls: async () => [], usageByCrawl: async () => new Map() } as unknown as CrawlStore;
const crawl = (limit: number, kind?: "batch") => ({ limit, ...(kind ? { kind } : {}) }) as unknown as CrawlOptions;

let auth: EmbeddedAuthStore;
beforeEach(async () => {
  auth = await EmbeddedAuthStore.open(null);
  await auth.saveTeam({ teamId: "t", name: "t", credits: 1000, createdAt: 0, version: 1 });
});
afterEach(() => auth.close());

describe("TeamAccess.admitJob", () => {
  it("budgets a crawl at CREDIT_BUDGET_PER_PAGE per page of its limit, leaving the rest to the team's other jobs", async () => {
    const access = new TeamAccess({ store: noCrawls, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const small = crawl(20);
    const held = await access.admitJob("t", small);
    expect(held.credits).toBe(200);
    expect(small).toMatchObject({ limit: 20, maxCredits: 200, pdf: { creditPages: 200 } });
    // the other 800 are free for another job; one credit more is not
    const other = await access.reserve("t", 800);
    await expect(access.reserve("t", 1)).rejects.toBeInstanceOf(CreditsError);
    other.release();
    held.release();
  });

  it("gives a crawl whose limit exceeds its budget's worth, and a batch, every credit left", async () => {
    const access = new TeamAccess({ store: noCrawls, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const big = crawl(5000);
    const held = await access.admitJob("t", big);
    expect(big).toMatchObject({ limit: 1000, maxCredits: 1000 });
    await expect(access.reserve("t", 1)).rejects.toBeInstanceOf(CreditsError);
    held.release();
    const batch = crawl(3, "batch");
    const b = await access.admitJob("t", batch, 3);
    expect(batch).toMatchObject({ limit: 3, maxCredits: 1000 });
    b.release();
  });
});
