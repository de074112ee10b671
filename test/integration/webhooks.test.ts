// Signed webhooks with retries and a delivery log, in both modes, against a real receiver on loopback.
import { createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { TEAM_BYPASS } from "../../pipeline/runtime/constants.ts";
import { SUSPEND_AFTER } from "../../pipeline/webhook-emit/endpoint-breaker.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const SECRET = "whsec-test-123";

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;

  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver(SECRET)]);
    trawl = await startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: SECRET, webhookRetryDelaysMs: [200, 400], webhookMaxAttempts: 30 });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("delivers started, one page event per document, completed; signed; metadata echoed", async () => {
    receiver.received.length = 0;
    const res = await postJson(`${trawl.api}/v2/crawl`, {
      url: `${site.origin}/docs/`, limit: 1000,
      webhook: { url: receiver.url, metadata: { project: "docs", n: 1 }, events: ["started", "page", "completed"], headers: { "x-custom": "yes" } },
    });
    const id = res.body.id;
    await waitForEnd(trawl.api, id);
    await until("crawl.completed", () => receiver.received.some((r) => r.id === id && r.type === "crawl.completed"));
    const mine = receiver.received.filter((r) => r.id === id);
    const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
    const pages = mine.filter((r) => r.type === "crawl.page");
    expect(docs).toHaveLength(expectedDocPaths().length);
    expect(pages).toHaveLength(docs.length);
    expect(new Set(pages.map((p) => p.body.data[0].metadata.scrapeId))).toEqual(new Set(docs.map((d: any) => d.metadata.scrapeId)));
    expect(mine.every((r) => r.validSignature)).toBe(true);
    expect(mine.every((r) => r.type.startsWith("crawl."))).toBe(true);
    expect(mine[0]?.type).toBe("crawl.started");
    expect(mine.at(-1)?.type).toBe("crawl.completed");
    // the anchor's shape, plus the team that owns the job (authentication off: the anonymous team)
    for (const r of mine) expect(r.body).toMatchObject({ success: true, id, teamId: TEAM_BYPASS, metadata: { project: "docs", n: 1 }, error: null });
    expect(mine.find((r) => r.type === "crawl.started")?.body.data).toEqual([]);
    // the delivery log: each event handed once, delivered on its first attempt (an attempt is logged once it was
    // answered, so the last one may be written a moment after the receiver saw it)
    let log: Awaited<ReturnType<typeof trawl.running.store.listDeliveries>> = [];
    await until("the delivery log", async () => (log = await trawl.running.store.listDeliveries(id)).filter((d) => d.attempt === 1).length >= mine.length, 5000).catch(() => undefined);
    expect(log.filter((d) => d.attempt === 0)).toHaveLength(mine.length);
    expect(log.filter((d) => d.attempt === 1 && d.statusCode === 200)).toHaveLength(mine.length);
  });

  it("retries after the receiver answered 500", async () => {
    receiver.received.length = 0;
    receiver.requests = 0;
    receiver.failFirst = 3;
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook: receiver.url });
    // a retried event goes back in line: it may arrive after later events
    await until("all three events", () => new Set(receiver.received.filter((r) => r.id === res.body.id).map((r) => r.type)).size === 3);
    const types = receiver.received.filter((r) => r.id === res.body.id).map((r) => r.type).sort();
    expect(types).toEqual(["crawl.completed", "crawl.page", "crawl.started"]);
    const log = await trawl.running.store.listDeliveries(res.body.id);
    expect(log.filter((d) => d.statusCode === 500)).toHaveLength(3);
    expect(log.some((d) => d.attempt >= 2 && d.statusCode === 200)).toBe(true);
    receiver.failFirst = 0;
  });

  it("keeps retrying across a restart of webhook-emit", async () => {
    receiver.received.length = 0;
    receiver.failWith = 503;
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/section-1/`, limit: 4, webhook: receiver.url });
    const id = res.body.id;
    await waitForEnd(trawl.api, id);
    await until("some failed attempts", () => receiver.requests > 6);
    trawl = await trawl.restart();
    receiver.failWith = null;
    // retried events arrive in any order: wait for all of them
    const pages = () => new Set(receiver.received.filter((r) => r.id === id && r.type === "crawl.page").map((r) => r.eventId));
    await until("every event after the restart", () => pages().size === 4 && receiver.received.some((r) => r.id === id && r.type === "crawl.completed"));
    expect(pages().size).toBe(4);
  });
});

describe.each(MODES)("a dead webhook endpoint (%s mode)", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver(SECRET)]);
    // one partition: every crawl's webhooks share it, as two crawls hashed to one partition do
    trawl = await startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: SECRET, webhookRetryDelaysMs: [8000], webhookMaxAttempts: 2, webhookTimeoutMs: 1500, embeddedPartitions: 1, topicPartitions: 1 });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("does not delay another crawl's webhooks while its retries wait", async () => {
    const dead = await new Promise<string>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const { port } = s.address() as AddressInfo;
        s.close(() => resolve(`http://127.0.0.1:${port}/gone`));
      });
    });
    // crawl A: every event (started, 11 pages, completed) fails at once and waits 8 s for its retry
    const a = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/section-1/`, limit: 11, webhook: dead });
    await waitForEnd(trawl.api, a.body.id);
    let failedFirst = 0;
    await until("A's first attempts failed", () => {
      void trawl.running.store.listDeliveries(a.body.id).then((l) => (failedFirst = l.filter((d) => d.attempt === 1 && d.error !== "").length));
      return failedFirst >= 10;
    });
    // crawl B, on the same partition: its events arrive while A's retries are still waiting
    const submitted = Date.now();
    const b = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook: receiver.url });
    await until("B's crawl.started", () => receiver.received.some((r) => r.id === b.body.id && r.type === "crawl.started"), 15_000);
    const started = receiver.received.find((r) => r.id === b.body.id && r.type === "crawl.started") as { at: number };
    // well before A's first retry is due (8 s): fresh events never wait behind retries (they once waited a second
    // for each retry ahead of them on the partition)
    expect(started.at - submitted).toBeLessThan(3000);
    // and A's retries still happen, on time or later, never before
    let retried = 0;
    await until("A's retries", () => {
      void trawl.running.store.listDeliveries(a.body.id).then((l) => (retried = l.filter((d) => d.attempt === 2).length));
      return retried >= 10;
    });
    const log = await trawl.running.store.listDeliveries(a.body.id);
    for (const retry of log.filter((d) => d.attempt === 2)) {
      const first = log.find((d) => d.attempt === 1 && d.eventId === retry.eventId) as { at: number };
      expect(retry.at - first.at).toBeGreaterThanOrEqual(7900);
    }
  });

  it("an endpoint that never answers delays no other crawl's events, and costs a few time limits, not one per event", async () => {
    // accepts connections and never answers: each attempt costs WEBHOOK_TIMEOUT_MS (1.5 s)
    let connections = 0;
    const sockets: Socket[] = [];
    const hole = createServer((sock) => {
      connections++;
      sockets.push(sock);
    });
    const holeUrl = await new Promise<string>((resolve) => hole.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(hole.address() as AddressInfo).port}/hook`)));
    try {
      // crawl A: 13 events (started, 11 pages, completed) queued for the black hole on the only partition
      const a = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/section-1/`, limit: 11, webhook: holeUrl });
      await waitForEnd(trawl.api, a.body.id);
      const submitted = Date.now();
      const b = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook: receiver.url });
      await until("B's crawl.started", () => receiver.received.some((r) => r.id === b.body.id && r.type === "crawl.started"), 40_000);
      const started = receiver.received.find((r) => r.id === b.body.id && r.type === "crawl.started") as { at: number };
      // B's events never wait behind A's (they once waited a time limit per event of A ahead of them on the partition,
      // then a few time limits until the endpoint was suspended)
      expect(started.at - submitted).toBeLessThan(3000);
      // every event of A is attempted or counted as a failed attempt, well before its retry is due (8 s)
      let log: Awaited<ReturnType<typeof trawl.running.store.listDeliveries>> = [];
      await until("A's first attempts", () => {
        void trawl.running.store.listDeliveries(a.body.id).then((l) => (log = l));
        return log.filter((d) => d.attempt === 1).length === 13;
      }, 20_000);
      // real attempts: SUSPEND_AFTER failures in a row, then the endpoint is suspended — fewer than the events
      expect(connections).toBeGreaterThanOrEqual(SUSPEND_AFTER);
      expect(connections).toBeLessThan(13);
      expect(log.filter((d) => d.attempt === 1 && d.error.startsWith("not attempted")).length).toBeGreaterThanOrEqual(8);
    } finally {
      for (const sock of sockets) sock.destroy();
      await new Promise((r) => hole.close(r));
    }
  });
});

describe("webhooks to private addresses", () => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver(SECRET)]);
    trawl = await startTrawl({ mode: "embedded", allowLocalWebhooks: false, webhookSecret: SECRET, webhookRetryDelaysMs: [100], resolve: { "hook.test": "127.0.0.1" } });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("are refused at submit (400) for loopback literals and localhost when ALLOW_LOCAL_WEBHOOKS is off", async () => {
    for (const url of [receiver.url, receiver.url.replace("127.0.0.1", "localhost")]) {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook: url });
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST", details: [{ path: ["webhook"] }] });
    }
  });

  it("are refused at connect time for a name resolving to loopback, logged once per event, never retried", async () => {
    const url = receiver.url.replace("127.0.0.1", "hook.test");
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook: url });
    await waitForEnd(trawl.api, res.body.id);
    let log: Awaited<ReturnType<typeof trawl.running.store.listDeliveries>> = [];
    await until("the refusals in the delivery log", () => {
      void trawl.running.store.listDeliveries(res.body.id).then((l) => (log = l));
      return log.filter((d) => d.attempt === 1).length === 3;
    });
    await new Promise((r) => setTimeout(r, 500));
    log = await trawl.running.store.listDeliveries(res.body.id);
    expect(log.filter((d) => d.attempt >= 1).every((d) => d.attempt === 1 && d.error.startsWith("refused"))).toBe(true);
    expect(log.filter((d) => d.attempt >= 2)).toEqual([]);
    expect(receiver.requests).toBe(0);
  });
});
