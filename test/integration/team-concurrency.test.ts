// The per-team concurrency limit (jobs at once), in both modes, with real Kafka/ClickHouse or the embedded bus and
// store: a team's jobs over its limit wait (status scraping, a warning) and start in order as slots free; another
// team is not delayed; a queued job can be cancelled; a restart (graceful, or kill -9 in embedded mode) while a job is
// queued still runs it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { QUEUED_WARNING } from "../../pipeline/usecases/crawl-status.ts";
import type { CrawlStore } from "../../pipeline/store/crawl-store.ts";
import { killHard, launchEmbedded } from "./embedded-process.ts";
import { freePort } from "./own-infra.ts";

let site: FixtureSite;
beforeAll(async () => {
  // each page answers after 400 ms: a crawl of 6 pages runs for about a second or more
  site = await startFixtureSite({ delayMs: 400 });
});
afterAll(async () => {
  await site.close();
});

async function call(api: string, method: string, path: string, key?: string, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
  const res = await fetch(`${api}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: (await res.json()) as any };
}

const crawl = async (api: string, key?: string, limit = 6) => {
  const res = await call(api, "POST", "/v2/crawl", key, { url: `${site.origin}/docs/`, limit, sitemap: "skip" });
  expect(res.status).toBe(200);
  return res.body.id as string;
};

async function waitEnd(api: string, id: string, key?: string) {
  for (let i = 0; i < 1200; i++) {
    const { body } = await call(api, "GET", `/v2/crawl/${id}`, key);
    if (body.status !== "scraping") return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`crawl ${id} did not end`);
}

/** Polls `id` while `running` is scraping: every status seen of the queued job. */
async function whileRunning(api: string, running: string, id: string, key?: string) {
  const seen: any[] = [];
  for (let i = 0; i < 1200; i++) {
    const [r, q] = await Promise.all([call(api, "GET", `/v2/crawl/${running}`, key), call(api, "GET", `/v2/crawl/${id}`, key)]);
    if (r.body.status !== "scraping") return seen;
    seen.push(q.body);
    await new Promise((r2) => setTimeout(r2, 100));
  }
  throw new Error("the running crawl did not end");
}

/** Every status of the queued job while the other ran: scraping, nothing done, and (once the frontier held it) the warning. */
function expectQueued(seen: any[]) {
  for (const s of seen) expect(s).toMatchObject({ status: "scraping", completed: 0 });
  const held = seen.findIndex((s) => s.warning === QUEUED_WARNING);
  expect(held).toBeGreaterThanOrEqual(0);
  for (const s of seen.slice(held)) expect(s.warning).toBe(QUEUED_WARNING);
}

/** The frontier's record of the team queue: when the job was queued and admitted, and whether it waited. */
const queueOf = async (store: CrawlStore, id: string) => (await store.getCrawl(id))?.options.teamQueue;
/** Waits until the job runs (its team's admission let it start). */
async function started(store: CrawlStore, id: string) {
  for (let i = 0; i < 600; i++) {
    if ((await queueOf(store, id))?.admittedAt !== undefined) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`crawl ${id} never started`);
}

const endOf = async (store: CrawlStore, id: string) => (await store.getCrawl(id))?.completedAt ?? 0;

describe.each(MODES)("per-team concurrency limit, two teams (%s)", (mode) => {
  let trawl: Instance;
  let keyX: string;
  let keyY: string;
  const admin = (path: string) => `/admin/CHANGEME${path}`;

  beforeAll(async () => {
    trawl = await startTrawl({ mode, useDbAuthentication: true, authCacheTtlMs: 300 });
    keyX = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `x-${mode}`, concurrency: 1 })).body.key;
    keyY = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `y-${mode}` })).body.key;
    const teams = (await call(trawl.api, "GET", admin("/teams"))).body.teams;
    expect(teams.find((t: { name: string }) => t.name === `x-${mode}`).concurrency).toBe(1);
    expect(teams.find((t: { name: string }) => t.name === `y-${mode}`).concurrency).toBeNull();
  });
  afterAll(async () => {
    await trawl?.stop();
  });

  it("runs a team's two crawls one after the other, while another team's crawl is not delayed", async () => {
    const a = await crawl(trawl.api, keyX);
    await started(trawl.running.store, a);
    const b = await crawl(trawl.api, keyX);
    const c = await crawl(trawl.api, keyY);
    const seen = await whileRunning(trawl.api, a, b, keyX);
    expectQueued(seen);
    const [doneA, doneB, doneC] = [await waitEnd(trawl.api, a, keyX), await waitEnd(trawl.api, b, keyX), await waitEnd(trawl.api, c, keyY)];
    for (const d of [doneA, doneB, doneC]) expect(d).toMatchObject({ status: "completed", completed: 6 });
    const store = trawl.running.store;
    const [qa, qb, qc] = [await queueOf(store, a), await queueOf(store, b), await queueOf(store, c)];
    // B started only after A ended; C (the other team) started at once, while A still ran
    expect(qb?.limited).toBe(true);
    expect(qb?.admittedAt).toBeGreaterThanOrEqual(await endOf(store, a));
    expect(qa?.limited).toBe(false);
    expect(qc?.limited).toBe(false);
    expect(qc?.admittedAt).toBeLessThan(await endOf(store, a));
    // the anchor's throttling marks on the documents of the job that waited, and only there
    expect(doneB.data.every((d: any) => d.metadata.concurrencyLimited === true && d.metadata.concurrencyQueueDurationMs === (qb?.admittedAt ?? 0) - (qb?.queuedAt ?? 0))).toBe(true);
    expect(doneB.data.every((d: any) => String(d.warning).startsWith("This scrape job was throttled"))).toBe(true);
    expect([...doneA.data, ...doneC.data].some((d: any) => "concurrencyLimited" in d.metadata)).toBe(false);
  });

  it("cancels a queued crawl at once; the next one still starts when the slot frees", async () => {
    const a = await crawl(trawl.api, keyX);
    await started(trawl.running.store, a);
    const d = await crawl(trawl.api, keyX);
    const e = await crawl(trawl.api, keyX, 2);
    expect((await call(trawl.api, "DELETE", `/v2/crawl/${d}`, keyX)).body).toMatchObject({ status: "cancelled" });
    expect((await call(trawl.api, "GET", `/v2/crawl/${d}`, keyX)).body).toMatchObject({ status: "cancelled", completed: 0 });
    expect(await waitEnd(trawl.api, a, keyX)).toMatchObject({ status: "completed" });
    expect(await waitEnd(trawl.api, e, keyX)).toMatchObject({ status: "completed", completed: 2 });
    const store = trawl.running.store;
    expect((await queueOf(store, e))?.admittedAt).toBeGreaterThanOrEqual(await endOf(store, a));
    expect((await queueOf(store, d))?.admittedAt).toBeUndefined();
    expect((await store.pageDocuments(d, 0, 1_000_000, 100)).docs).toHaveLength(0);
  });

  it("a crawl queued across a restart still runs, after the one before it", async () => {
    const a = await crawl(trawl.api, keyX);
    await started(trawl.running.store, a);
    const b = await crawl(trawl.api, keyX, 2);
    await new Promise((r) => setTimeout(r, 300));
    expect((await call(trawl.api, "GET", `/v2/crawl/${b}`, keyX)).body).toMatchObject({ status: "scraping", warning: QUEUED_WARNING });
    trawl = await trawl.restart();
    expect(await waitEnd(trawl.api, a, keyX)).toMatchObject({ status: "completed" });
    expect(await waitEnd(trawl.api, b, keyX)).toMatchObject({ status: "completed", completed: 2 });
    const store = trawl.running.store;
    expect((await queueOf(store, b))?.admittedAt).toBeGreaterThanOrEqual(await endOf(store, a));
  });
});

describe.each(MODES)("TEAM_MAX_CONCURRENCY with authentication off (%s)", (mode) => {
  let trawl: Instance;
  beforeAll(async () => {
    trawl = await startTrawl({ mode, teamMaxConcurrency: 1 });
  });
  afterAll(async () => {
    await trawl?.stop();
  });

  it("the anonymous team runs one job at a time: a crawl, then a batch scrape", async () => {
    const a = (await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 4, sitemap: "skip" })).body.id as string;
    await started(trawl.running.store, a);
    const b = (await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/docs/about`, `${site.origin}/docs/section-1/`] })).body.id as string;
    const seen = await whileRunning(trawl.api, a, b);
    expectQueued(seen);
    await waitForEnd(trawl.api, a);
    const [end] = (await waitForEnd(trawl.api, b)).slice(-1);
    expect(end).toMatchObject({ status: "completed", completed: 2 });
    const store = trawl.running.store;
    expect((await queueOf(store, b))?.admittedAt).toBeGreaterThanOrEqual(await endOf(store, a));
  });
});

describe("a queued job survives kill -9 (embedded mode)", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-team-queue-"));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it("killed while one crawl runs and the next waits: after the start both run, one after the other", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    // pages start at least 150 ms apart on the fixture's host: the first crawl runs for a few seconds
    const settings = { TEAM_MAX_CONCURRENCY: "1", HOST_DELAY_MS: "150" };
    let proc = await launchEmbedded(dataDir, port, settings);
    try {
      const a = (await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 12, sitemap: "skip" })).body.id as string;
      for (let i = 0; i < 200 && (await call(api, "GET", `/v2/crawl/${a}`)).body.completed < 1; i++) await new Promise((r) => setTimeout(r, 50));
      const b = (await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 2, sitemap: "skip" })).body.id as string;
      // the queue is on disk once b shows it is held
      for (let i = 0; i < 200 && (await call(api, "GET", `/v2/crawl/${b}`)).body.warning !== QUEUED_WARNING; i++) await new Promise((r) => setTimeout(r, 50));
      expect((await call(api, "GET", `/v2/crawl/${b}`)).body).toMatchObject({ status: "scraping", completed: 0, warning: QUEUED_WARNING });
      expect((await call(api, "GET", `/v2/crawl/${a}`)).body.status).toBe("scraping");
      await killHard(proc.child);
      proc = await launchEmbedded(dataDir, port, settings);
      const doneA = await waitEnd(api, a);
      const doneB = await waitEnd(api, b);
      expect(doneA).toMatchObject({ status: "completed", completed: 12 });
      expect(doneB).toMatchObject({ status: "completed", completed: 2 });
      // b waited for a: its documents say so, and it ended after a
      expect(doneB.data.every((d: any) => d.metadata.concurrencyLimited === true && d.metadata.concurrencyQueueDurationMs > 0)).toBe(true);
      expect(doneA.data.some((d: any) => "concurrencyLimited" in d.metadata)).toBe(false);
      expect(Date.parse(doneB.completedAt)).toBeGreaterThanOrEqual(Date.parse(doneA.completedAt));
    } finally {
      await killHard(proc.child);
    }
  });
});
