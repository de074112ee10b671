// A crawl's or batch's credit budget (TeamAccess.admitJob) and an append's (appendBudget) with a real embedded auth
// store: the credits left, up to CREDIT_BUDGET_PER_PAGE per page of the crawl's limit (per URL of a batch or an
// append), held from the team's other jobs while it is admitted.
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

  it("gives a crawl whose limit exceeds its budget's worth every credit left", async () => {
    const access = new TeamAccess({ store: noCrawls, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const big = crawl(5000);
    const held = await access.admitJob("t", big);
    expect(big).toMatchObject({ limit: 1000, maxCredits: 1000 });
    await expect(access.reserve("t", 1)).rejects.toBeInstanceOf(CreditsError);
    held.release();
  });

  it("budgets a batch at CREDIT_BUDGET_PER_PAGE per URL, leaving the rest to the team's other jobs", async () => {
    const access = new TeamAccess({ store: noCrawls, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const batch = crawl(2, "batch");
    const b = await access.admitJob("t", batch, 2);
    expect(b.credits).toBe(20);
    expect(batch).toMatchObject({ limit: 2, maxCredits: 20 });
    const other = await access.reserve("t", 980);
    await expect(access.reserve("t", 1)).rejects.toBeInstanceOf(CreditsError);
    other.release();
    b.release();
  });
});

describe("TeamAccess.appendBudget", () => {
  it("reserves up to CREDIT_BUDGET_PER_PAGE per appended URL, at least 1 each, at most what is left", async () => {
    const access = new TeamAccess({ store: noCrawls, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const batch = await access.admitJob("t", crawl(2, "batch"), 2); // holds 20
    const append = await access.appendBudget("t", 3);
    expect(append.credits).toBe(30);
    const rest = await access.reserve("t", 1, 1000); // a crawl's budget: all that is left
    expect(rest.credits).toBe(950);
    // nothing left: an append of one URL is refused
    await expect(access.appendBudget("t", 1)).rejects.toBeInstanceOf(CreditsError);
    rest.release();
    // 5 left to 10 URLs: refused (1 each); to 5 URLs: granted the 5
    const most = await access.reserve("t", 945, 945);
    await expect(access.appendBudget("t", 10)).rejects.toBeInstanceOf(CreditsError);
    expect((await access.appendBudget("t", 5)).credits).toBe(5);
    most.release();
    append.release();
    batch.release();
  });

  it("holds an append's credits until its batch's record has the raised budget, or the batch ended", async () => {
    // a running batch whose record has a budget (what creditsCommitted counts), nothing used yet
    let budget: number | undefined = 20;
    const store = {
      activeCrawls: async () => (budget === undefined ? [] : [{ crawlId: "b", creditsUsed: 0, options: { kind: "batch", maxCredits: budget } }]),
      usageByCrawl: async () => new Map([["b", { credits: 0, tokens: 0 }]]),
    } as unknown as CrawlStore;
    const access = new TeamAccess({ store, auth, cacheTtlMs: 60_000, now: () => 0, budgetPerPage: 10 });
    const left = async () => {
      const all = await access.reserve("t", 1, 10_000);
      all.release();
      return all.credits;
    };
    const first = await access.appendBudget("t", 3);
    expect(first.credits).toBe(30);
    access.appended("b", first, 50);
    // the frontier has not raised the budget yet: the record's 20 and the append's 30 are held
    expect(await left()).toBe(950);
    budget = 50;
    // raised: the record holds the 30, the append's hold is dropped (not counted twice)
    expect(await left()).toBe(950);
    expect(access.reservations.heldBy("t")).toBe(0);
    // two appends at once (20 and 10 credits, each saw the budget 50); the frontier raises it by the second's first:
    // both stay held (the first's raise is not in the record; the second's is held until the record has both)
    const second = await access.appendBudget("t", 2);
    const third = await access.appendBudget("t", 1);
    access.appended("b", second, 70);
    access.appended("b", third, 60);
    expect(await left()).toBe(920);
    budget = 60;
    expect(await left()).toBe(910);
    // the batch ends before its budget has the other raise: its use is counted, the holds dropped
    budget = undefined;
    expect(await left()).toBe(1000);
    expect(access.reservations.heldBy("t")).toBe(0);
  });
});
