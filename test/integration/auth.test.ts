// Authentication and teams (USE_DB_AUTHENTICATION=true), in both modes: keys made through the admin route, 401s in
// the anchor's words, isolation of every route of a job between teams, credits (clamp, 402), per-key rate limits,
// revocation within AUTH_CACHE_TTL_MS, and the official SDK with a key. Then the CLI and the logs, as processes.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import Firecrawl from "@mendable/firecrawl-js";
import { Agent, fetch as fetchVia } from "undici";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver } from "../fixtures/webhook-receiver.ts";
import { MODES, startTrawl, type Instance } from "./harness.ts";
import { readTopic } from "./topic-reader.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const NODE = join(ROOT, "node_modules", ".bin", "node");

let site: FixtureSite;
beforeAll(async () => {
  site = await startFixtureSite();
});
afterAll(async () => {
  await site.close();
});

async function call(api: string, method: string, path: string, key?: string, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (key !== undefined) headers.authorization = key === "" ? "Bearer" : `Bearer ${key}`;
  const res = await fetch(`${api}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, retryAfter: res.headers.get("retry-after"), text };
}

/** A request from another loopback address (127.0.0.0/8 is all local): another client for the failed-key limit. */
async function callFrom(localAddress: string, api: string, path: string, authorization: string) {
  const dispatcher = new Agent({ localAddress });
  try {
    const res = await fetchVia(`${api}${path}`, { headers: { authorization }, dispatcher });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, retryAfter: res.headers.get("retry-after") };
  } finally {
    await dispatcher.close();
  }
}

async function waitDone(api: string, key: string, id: string) {
  for (let i = 0; i < 600; i++) {
    const { body } = await call(api, "GET", `/v2/crawl/${id}`, key);
    if (body.status !== "scraping") return body;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("crawl did not end");
}

/** The close of a WebSocket watch: code and reason. */
function watchClose(api: string, id: string, key: string, localAddress?: string): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${api.replace("http", "ws")}/v2/crawl/${id}`, [key], localAddress ? { localAddress } : {});
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    ws.on("error", () => undefined);
  });
}

describe.each(MODES)("authentication and teams (%s)", (mode) => {
  let trawl: Instance;
  let keyA: string;
  let keyB: string;
  let keyC: string;
  let teamB: string;
  let teamC: string;
  const admin = (path: string) => `/admin/CHANGEME${path}`;

  beforeAll(async () => {
    trawl = await startTrawl({ mode, useDbAuthentication: true, authCacheTtlMs: 300, allowLocalWebhooks: true });
    keyA = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `a-${mode}`, credits: 5 })).body.key;
    ({ key: keyB, teamId: teamB } = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `b-${mode}` })).body);
    ({ key: keyC, teamId: teamC } = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `c-${mode}` })).body);
  });
  afterAll(async () => {
    await trawl?.stop();
  });

  it("answers 401 without a valid key, in the anchor's words", async () => {
    expect(keyA).toMatch(/^fc-[0-9a-f]{40}$/);
    expect(await call(trawl.api, "GET", "/v2/crawl/active")).toMatchObject({ status: 401, body: { success: false, error: "Unauthorized" } });
    expect(await call(trawl.api, "GET", "/v2/crawl/active", "")).toMatchObject({ status: 401, body: { success: false, error: "Unauthorized: Token missing" } });
    expect(await call(trawl.api, "GET", "/v2/crawl/active", "fc-0000000000000000000000000000000000000000")).toMatchObject({ status: 401, body: { error: "Unauthorized: Invalid token" } });
    expect(await call(trawl.api, "GET", "/v2/crawl/active", keyA.slice(0, -1) + (keyA.endsWith("0") ? "1" : "0"))).toMatchObject({ status: 401 });
    const expired = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `a-${mode}`, expiresAt: 1 })).body.key;
    expect((await call(trawl.api, "GET", "/v2/crawl/active", expired)).status).toBe(401);
    expect((await call(trawl.api, "GET", "/health")).status).toBe(200);
  });

  it("takes a key from `Authorization: Bearer` only (any case): Basic, Token and a bare key get the 401", async () => {
    const asIs = async (authorization: string) => {
      const res = await fetch(`${trawl.api}/v2/crawl/active`, { headers: { authorization } });
      return { status: res.status, body: await res.json() };
    };
    for (const scheme of ["Basic", "Token", "Key", "Bearer-"]) {
      expect(await asIs(`${scheme} ${keyB}`), scheme).toEqual({ status: 401, body: { success: false, error: "Unauthorized: Invalid token" } });
    }
    expect((await asIs(keyB)).status).toBe(401);
    for (const scheme of ["Bearer", "bearer", "BEARER"]) expect((await asIs(`${scheme} ${keyB}`)).status, scheme).toBe(200);
  });

  it("answers 429 with Retry-After to an address past AUTH_FAILURE_LIMIT wrong keys, before any hash; valid keys keep working", async () => {
    const flooder = "127.0.0.3";
    const fresh = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `b-${mode}` })).body.key as string;
    // verified from the flooding address before its flood: a key this process knows needs no hash, so it still passes
    expect((await callFrom(flooder, trawl.api, "/v2/crawl/active", `Bearer ${keyB}`)).status).toBe(200);
    const limit = trawl.config.authFailureLimit;
    const wrong = Array.from({ length: limit + 10 }, (_, i) => `${keyB.slice(0, 11)}${i.toString(16).padStart(32, "f")}`);
    const [flood, valid] = await Promise.all([
      Promise.all(wrong.map((k) => callFrom(flooder, trawl.api, "/v2/crawl/active", `Bearer ${k}`))),
      (async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) statuses.push((await call(trawl.api, "GET", "/v2/crawl/active", keyC)).status);
        return statuses;
      })(),
    ]);
    expect(valid).toEqual(valid.map(() => 200));
    expect(flood.filter((r) => r.status === 401)).toHaveLength(limit);
    const limited = flood.filter((r) => r.status === 429);
    expect(limited).toHaveLength(10);
    for (const r of limited) {
      expect(r.body).toEqual({ success: false, code: "RATE_LIMIT_EXCEEDED", error: expect.stringMatching(/^Rate limit exceeded: too many refused API keys from your address\. Please retry after \d+s\.$/) });
      expect(Number(r.retryAfter)).toBeGreaterThan(0);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(trawl.config.authFailureWindowMs / 1000);
    }
    // still limited: a key never verified is not even hashed (429, not 200 nor 401), over a WebSocket too
    expect((await callFrom(flooder, trawl.api, "/v2/crawl/active", `Bearer ${fresh}`)).status).toBe(429);
    expect((await watchClose(trawl.api, "00000000-0000-4000-8000-000000000000", wrong[0] as string, flooder)).reason).toMatch(/Rate limit exceeded/);
    expect((await callFrom(flooder, trawl.api, "/v2/crawl/active", `Bearer ${keyB}`)).status).toBe(200);
    // another address is not affected, with a key new to this process too
    expect((await callFrom("127.0.0.4", trawl.api, "/v2/crawl/active", `Bearer ${fresh}`)).status).toBe(200);
    expect((await call(trawl.api, "GET", "/v2/crawl/active", "fc-0000000000000000000000000000000000000000")).status).toBe(401);
  });

  it("keeps a team's jobs from every other team: status, errors, cancel, active, watch, scrape", async () => {
    const started = await call(trawl.api, "POST", "/v2/crawl", keyB, { url: `${site.origin}/docs/`, limit: 3 });
    expect(started.status).toBe(200);
    const id = started.body.id as string;
    for (const path of [`/v2/crawl/${id}`, `/v2/crawl/${id}/errors`]) {
      expect(await call(trawl.api, "GET", path, keyA), path).toMatchObject({ status: 404, body: { error: "Job not found" } });
    }
    expect((await call(trawl.api, "GET", "/v2/crawl/active", keyA)).body.crawls.map((c: { id: string }) => c.id)).not.toContain(id);
    expect(await call(trawl.api, "DELETE", `/v2/crawl/${id}`, keyA)).toMatchObject({ status: 404, body: { error: "Job not found" } });
    expect(await watchClose(trawl.api, id, keyA)).toEqual({ code: 1008, reason: JSON.stringify({ type: "error", error: "Job not found" }) });
    expect((await watchClose(trawl.api, id, "fc-0000000000000000000000000000000000000000")).reason).toContain("Unauthorized");
    const done = await waitDone(trawl.api, keyB, id);
    expect(done).toMatchObject({ status: "completed", completed: 3 });
    const scraped = await call(trawl.api, "POST", "/v2/scrape", keyB, { url: `${site.origin}/docs/about` });
    expect(scraped.status).toBe(200);
    const scrapeId = scraped.body.data.metadata.scrapeId;
    expect((await call(trawl.api, "GET", `/v2/scrape/${scrapeId}`, keyB)).status).toBe(200);
    expect((await call(trawl.api, "GET", `/v2/scrape/${scrapeId}`, keyA)).status).toBe(404);
  });

  it("counts credits exactly, lowers a crawl's limit to what is left, then answers 402", async () => {
    const started = await call(trawl.api, "POST", "/v2/crawl", keyA, { url: `${site.origin}/docs/`, limit: 50 });
    expect(started.status).toBe(200);
    const done = await waitDone(trawl.api, keyA, started.body.id);
    expect(done.completed).toBe(5);
    expect(done.creditsUsed).toBe(5);
    const extract = { urls: [`${site.origin}/docs/about`], schema: { type: "object", properties: { title: { type: "string" } } } };
    for (const [path, body] of [["/v2/crawl", { url: `${site.origin}/docs/` }], ["/v2/scrape", { url: `${site.origin}/docs/about` }], ["/v2/extract", extract]] as const) {
      const refused = await call(trawl.api, "POST", path, keyA, body);
      expect(refused.status, path).toBe(402);
      expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/^Insufficient credits/) });
    }
  });

  it("charges an extract job to its team: 5 credits a page, in the credit usage and its history (SDK)", async () => {
    const keyC = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `extract-${mode}`, credits: 100 })).body.key as string;
    const fc = new Firecrawl({ apiKey: keyC, apiUrl: trawl.api });
    const before = (await call(trawl.api, "GET", "/v2/team/credit-usage", keyC)).body.data;
    expect(before).toMatchObject({ creditsUsed: 0, remainingCredits: 100, planCredits: 100 });
    const result = await fc.extract({ urls: [`${site.origin}/docs/about`, `${site.origin}/docs/`], schema: { type: "object", properties: { title: { type: "string" } } } });
    expect(result.status).toBe("completed");
    const after = (await call(trawl.api, "GET", "/v2/team/credit-usage", keyC)).body.data;
    expect(after).toMatchObject({ creditsUsed: 10, remainingCredits: 90 });
    expect(await fc.getCreditUsage()).toMatchObject({ remainingCredits: 90, planCredits: 100 });
    const month = new Date();
    const start = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1)).toISOString();
    const history = await fc.getCreditUsageHistorical();
    expect(history).toEqual({ success: true, periods: [{ startDate: start, endDate: expect.any(String), creditsUsed: 10 }] });
    expect(Date.parse(history.periods[0]?.endDate as string) + 1).toBe(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1));
    // another team's history holds its own jobs only
    const b = await new Firecrawl({ apiKey: keyB, apiUrl: trawl.api }).getCreditUsageHistorical();
    expect(b.periods.map((p) => p.creditsUsed)).not.toContain(10);
    await expect(fc.getCreditUsageHistorical(true)).rejects.toThrow(/byApiKey is not supported/);
    expect((await call(trawl.api, "GET", "/v2/team/token-usage/historical?byApiKey=maybe", keyC)).status).toBe(400);
  });

  it("reports queue status and concurrency of the caller's team only", async () => {
    const keyD = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `d-${mode}` })).body.key as string;
    const fcB = new Firecrawl({ apiKey: keyB, apiUrl: trawl.api });
    const fcD = new Firecrawl({ apiKey: keyD, apiUrl: trawl.api });
    // one page every 2 s: the crawl stays running while the queues are read
    const started = await call(trawl.api, "POST", "/v2/crawl", keyB, { url: `${site.origin}/docs/`, limit: 4, delay: 2 });
    expect(started.status).toBe(200);
    let queueB = await fcB.getQueueStatus();
    for (let i = 0; i < 100 && queueB.jobsInQueue === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      queueB = await fcB.getQueueStatus();
    }
    expect(queueB.jobsInQueue).toBeGreaterThan(0);
    expect(queueB.activeJobsInQueue + queueB.waitingJobsInQueue).toBe(queueB.jobsInQueue);
    expect((await fcB.getConcurrency()).concurrency).toBeGreaterThan(0);
    expect(await fcD.getQueueStatus()).toMatchObject({ jobsInQueue: 0, activeJobsInQueue: 0, waitingJobsInQueue: 0, mostRecentSuccess: null, maxConcurrency: trawl.config.fetchConcurrency });
    expect(await fcD.getConcurrency()).toEqual({ concurrency: 0, maxConcurrency: trawl.config.fetchConcurrency });
    expect((await call(trawl.api, "DELETE", `/v2/crawl/${started.body.id}`, keyB)).status).toBe(200);
    expect((await fcB.getQueueStatus()).jobsInQueue).toBe(0);
  });

  it("limits requests per key per minute with 429 and Retry-After", async () => {
    const limited = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `b-${mode}`, ratePerMin: 3 })).body.key;
    for (let i = 0; i < 3; i++) expect((await call(trawl.api, "GET", "/v2/crawl/active", limited)).status).toBe(200);
    const over = await call(trawl.api, "GET", "/v2/crawl/active", limited);
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
    expect(over.body.error).toMatch(/^Rate limit exceeded/);
  });

  it("stops a revoked key within AUTH_CACHE_TTL_MS", async () => {
    const key = (await call(trawl.api, "POST", admin("/keys"), undefined, { team: `b-${mode}` })).body.key as string;
    expect((await call(trawl.api, "GET", "/v2/crawl/active", key)).status).toBe(200);
    expect(await call(trawl.api, "DELETE", admin(`/keys/${key.slice(3, 11)}`))).toMatchObject({ status: 200, body: { revoked: 1 } });
    await new Promise((r) => setTimeout(r, 400));
    expect((await call(trawl.api, "GET", "/v2/crawl/active", key)).status).toBe(401);
    const listed = (await call(trawl.api, "GET", admin("/keys"))).body.keys.find((k: { keyId: string }) => k.keyId === key.slice(3, 11));
    expect(listed.revokedAt).toBeGreaterThan(0);
    expect(JSON.stringify(listed)).not.toContain(key);
  });

  it("names each job's own team in its webhook bodies and its crawl.pages / crawl.events messages", async () => {
    const receiver = await startReceiver("");
    const pages = readTopic(trawl, "crawl.pages");
    const events = readTopic(trawl, "crawl.events");
    try {
      const jobs: [string, string][] = [];
      for (const [key, team] of [[keyB, teamB], [keyC, teamC]] as const) {
        const started = await call(trawl.api, "POST", "/v2/crawl", key, { url: `${site.origin}/docs/`, limit: 2, webhook: receiver.url });
        expect(started.status).toBe(200);
        jobs.push([started.body.id, team]);
      }
      for (const [id] of jobs) await waitDone(trawl.api, jobs[0]?.[0] === id ? keyB : keyC, id);
      const end = Date.now() + 30_000;
      const want = (id: string, list: { id: string; type: string }[]) => list.filter((r) => r.id === id).length;
      while (jobs.some(([id]) => want(id, receiver.received) < 4) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
      const pageMsgs = await pages.messages();
      const eventMsgs = await events.messages();
      expect(jobs[0]?.[1]).not.toBe(jobs[1]?.[1]);
      for (const [id, team] of jobs) {
        const hooks = receiver.received.filter((r) => r.id === id);
        expect(hooks.map((r) => r.type).sort()).toEqual(["crawl.completed", "crawl.page", "crawl.page", "crawl.started"]);
        expect(hooks.map((r) => r.body.teamId)).toEqual(hooks.map(() => team));
        const mine = pageMsgs.filter(([k]) => k === id).map(([, v]) => v);
        expect(mine).toHaveLength(2);
        expect(mine.map((p) => p.teamId)).toEqual([team, team]);
        const evs = eventMsgs.filter(([k]) => k === id).map(([, v]) => v);
        expect(evs.map((e) => e.type)).toEqual(["crawl.started", "crawl.page", "crawl.page", "crawl.completed"]);
        expect(evs.map((e) => e.teamId)).toEqual(evs.map(() => team));
      }
    } finally {
      await Promise.all([pages.stop(), events.stop(), receiver.close()]);
    }
  });

  it("works with the official JS SDK and a key", async () => {
    const firecrawl = new Firecrawl({ apiKey: keyB, apiUrl: trawl.api });
    const job = await firecrawl.crawl(`${site.origin}/docs/`, { limit: 2, pollInterval: 1 });
    expect(job.status).toBe("completed");
    expect(job.data).toHaveLength(2);
    await expect(new Firecrawl({ apiKey: "fc-0000000000000000000000000000000000000000", apiUrl: trawl.api }).crawl(`${site.origin}/docs/`, { limit: 1 })).rejects.toThrow();
  });
});

describe("keys from the terminal, and keys never logged", () => {
  it("`trawl keys create` prints a key the running server accepts; no key appears in its logs", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "trawl-auth-"));
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const env = { ...process.env, DATA_DIR: tmp, PORT: String(port), USE_DB_AUTHENTICATION: "true", AUTH_CACHE_TTL_MS: "200", LOG_LEVEL: "trace", ALLOW_PRIVATE_CRAWL_TARGETS: "true", MAX_CPU: "1", MAX_RAM: "1" };
    const exec = (args: string[]) => new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const p = spawn(NODE, ["bin/trawl.js", ...args], { cwd: ROOT, env });
      let out = "";
      let err = "";
      p.stdout.on("data", (d) => (out += d));
      p.stderr.on("data", (d) => (err += d));
      p.on("exit", (code) => resolve({ code: code ?? -1, out, err }));
    });
    const server = spawn(NODE, ["bin/trawl.js", "all", "--embedded"], { cwd: ROOT, env });
    let logs = "";
    server.stdout.on("data", (d) => (logs += d));
    server.stderr.on("data", (d) => (logs += d));
    const api = `http://127.0.0.1:${port}`;
    try {
      for (let i = 0; i < 300; i++) {
        if (await fetch(`${api}/ready`).then((r) => r.ok, () => false)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const created = await exec(["keys", "create", "--team", "cli-team", "--credits", "10", "--rate", "100/min", "--concurrency", "3", "--embedded"]);
      expect(created.code, created.err).toBe(0);
      const key = created.out.trim();
      expect(key).toMatch(/^fc-[0-9a-f]{40}$/);
      expect((await call(api, "GET", "/v2/crawl/active", key)).status).toBe(200);
      expect((await call(api, "GET", "/v2/crawl/active", key.replace(/.$/, "x"))).status).toBe(401);
      expect((await call(api, "POST", "/v2/scrape", key, { url: `${site.origin}/docs/about` })).status).toBe(200);
      const listed = await exec(["keys", "list", "--embedded"]);
      expect(listed.out).toContain(key.slice(3, 11));
      expect(listed.out).toContain("cli-team");
      expect((await exec(["teams", "list", "--embedded"])).out).toMatch(/cli-team\t10\t\S+\t3$/m);
      expect((await exec(["teams", "concurrency", "cli-team", "0", "--embedded"])).code).toBe(0);
      expect((await exec(["teams", "list", "--embedded"])).out).toMatch(/cli-team\t10\t\S+\tunlimited$/m);
      expect((await exec(["teams", "concurrency", "cli-team", "-1", "--embedded"])).code).toBe(2);
      expect((await exec(["keys", "revoke", key, "--embedded"])).code).toBe(0);
      await new Promise((r) => setTimeout(r, 300));
      expect((await call(api, "GET", "/v2/crawl/active", key)).status).toBe(401);
      expect(logs.length).toBeGreaterThan(1000);
      expect(logs).not.toContain(key);
      expect(logs).not.toContain(key.slice(11));
    } finally {
      server.kill("SIGTERM");
      await new Promise((r) => server.on("exit", r));
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
