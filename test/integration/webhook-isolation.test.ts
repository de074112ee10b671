// Webhooks isolated per endpoint (issue 31 item 5): 36 endpoints that hang or answer after the time limit must not
// delay the events of a fast endpoint; their own events are still attempted and logged. Both modes.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { startSlowEndpoints, type SlowEndpoints } from "../fixtures/slow-webhooks.ts";
import { eventId } from "../../pipeline/webhook-emit/payload.ts";
import type { CrawlEvent } from "../../schemas/index.ts";
import { getJson, MODES, postJson, startTrawl, type Instance } from "./harness.ts";
import { readTopic } from "./topic-reader.ts";
import { killHard, launchEmbedded } from "./embedded-process.ts";
import { freePort } from "./own-infra.ts";

const SECRET = "whsec-isolation";
const SLOW = 36;
const FAST_CRAWLS = 8;
const TIMEOUT_MS = 1500;
const EVENTS_PER_CRAWL = 3; // started, one page, completed

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

describe.each(MODES)("webhooks isolated per endpoint (%s mode)", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  let slow: SlowEndpoints;

  beforeAll(async () => {
    [site, receiver, slow] = await Promise.all([startFixtureSite(), startReceiver(SECRET), startSlowEndpoints(SLOW, TIMEOUT_MS + 1000)]);
    trawl = await startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: SECRET, webhookTimeoutMs: TIMEOUT_MS, webhookRetryDelaysMs: [1000], webhookMaxAttempts: 2 });
  });
  afterAll(async () => {
    await trawl?.stop();
    await Promise.all([site?.close(), receiver?.close(), slow?.close()]);
  });

  it("a fast endpoint's events arrive within 1 s of their emission while 36 slow endpoints time out", async () => {
    const events = readTopic(trawl, "crawl.events");
    try {
      const crawl = async (webhook: string) => (await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1, webhook })).body.id as string;
      const slowIds = await Promise.all(slow.endpoints.map((e) => crawl(e.url)));
      await until("attempts to the slow endpoints", () => slow.endpoints.filter((e) => e.requests > 0).length >= SLOW / 2, 15_000);
      // the fast crawls run while the slow endpoints' attempts wait for their time limits (not during the burst of
      // the slow crawls' starts, which is no webhook's doing); each has its own URL of the one fast endpoint
      const fastIds: string[] = [];
      for (let i = 0; i < FAST_CRAWLS; i++) {
        fastIds.push(await crawl(`${receiver.url}?crawl=${i}`));
        await sleep(600);
      }
      const arrived = () => receiver.received.filter((r) => fastIds.includes(r.id));
      await until("the fast endpoint's events", () => arrived().length >= FAST_CRAWLS * EVENTS_PER_CRAWL, 15_000).catch(() => undefined);

      // latency of each fast event: its arrival at the endpoint minus its creation (`at` of its crawl.events message)
      // and minus its emission (when that message was produced: its timestamp in Kafka)
      const createdAt = new Map<string, number>();
      const emittedAt = new Map<string, number>();
      for (const [, e, producedAt] of (await events.messages()) as [string, CrawlEvent, number][]) {
        createdAt.set(`${e.crawlId}:${eventId(e)}`, e.at);
        emittedAt.set(`${e.crawlId}:${eventId(e)}`, mode === "cluster" ? producedAt : e.at);
      }
      const fromCreation = arrived().map((r) => r.at - (createdAt.get(r.eventId) ?? NaN));
      const fromEmission = arrived().map((r) => r.at - (emittedAt.get(r.eventId) ?? NaN));
      console.log(`${mode}: fast endpoint, ${arrived().length} of ${FAST_CRAWLS * EVENTS_PER_CRAWL} events arrived; from creation median ${median(fromCreation)} ms, max ${Math.max(...fromCreation)} ms; from emission median ${median(fromEmission)} ms, max ${Math.max(...fromEmission)} ms`);
      expect(arrived()).toHaveLength(FAST_CRAWLS * EVENTS_PER_CRAWL);
      expect(fromEmission.every((ms) => ms >= 0 && ms < 1000), fromEmission.join(" ")).toBe(true);
      // each fast crawl's events in order: started, page, completed
      for (const id of fastIds) expect(arrived().filter((r) => r.id === id).map((r) => r.type)).toEqual(["crawl.started", "crawl.page", "crawl.completed"]);

      // the slow endpoints' events are still attempted and logged: every event of every slow crawl has a first attempt
      // in the delivery log, and every slow endpoint was reached
      await until("the slow crawls' first attempts in the delivery log", async () => {
        const logs = await Promise.all(slowIds.map((id) => trawl.running.store.listDeliveries(id)));
        return logs.every((l) => l.filter((d) => d.attempt === 1).length === EVENTS_PER_CRAWL);
      }, 20_000);
      expect(slow.endpoints.filter((e) => e.requests === 0)).toEqual([]);
      const slowLog = (await Promise.all(slowIds.map((id) => trawl.running.store.listDeliveries(id)))).flat();
      expect(slowLog.filter((d) => d.attempt >= 1 && d.statusCode === 0 && d.error !== "").length).toBeGreaterThanOrEqual(SLOW * EVENTS_PER_CRAWL);
    } finally {
      await events.stop();
    }
  });
});

describe("webhooks isolated per endpoint, kill -9 (embedded process)", () => {
  let site: FixtureSite;
  let receiver: Receiver;
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-hooks-kill-"));
  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver(SECRET)]);
  });
  afterAll(async () => {
    await Promise.all([site?.close(), receiver?.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("loses no event that was in flight, waiting in its lane or parked", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    // one attempt at a time to the endpoint, which hangs: crawl X's first event holds the slot, the rest of X waits in
    // its lane, and crawl Y (no free slot) is parked
    const env = { ALLOW_LOCAL_WEBHOOKS: "true", SELF_HOSTED_WEBHOOK_HMAC_SECRET: SECRET, WEBHOOK_ENDPOINT_CONCURRENCY: "1", WEBHOOK_TIMEOUT_MS: "60000" };
    let proc = await launchEmbedded(dataDir, port, env);
    try {
      receiver.hang = true;
      const crawl = async (path: string, limit: number, hook: string) => (await postJson(`${api}/v2/crawl`, { url: `${site.origin}${path}`, limit, webhook: `${receiver.url}?${hook}` })).body.id as string;
      const x = await crawl("/docs/about", 1, "x");
      await until("X's first attempt", () => receiver.requests >= 1, 15_000);
      const y = await crawl("/docs/section-1/", 4, "y");
      const ended = async (id: string) => (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body.status !== "scraping";
      await until("both crawls ended", async () => (await ended(x)) && (await ended(y)), 30_000);
      // Y's events wait on the parked topic (its log on disk), X's in its lane, one of them in flight
      const parkedDir = join(dataDir, "bus", "webhook.parked");
      const parkedOfY = () => existsSync(parkedDir) ? readdirSync(parkedDir).map((f) => readFileSync(join(parkedDir, f), "utf8")).join("").split(`"crawlId":"${y}"`).length - 1 : 0;
      await until("Y's events parked", () => parkedOfY() >= 6, 10_000);
      await killHard(proc.child);
      receiver.hang = false;
      proc = await launchEmbedded(dataDir, port, env);
      // X: started, page, completed; Y: started, 4 pages, completed — each delivered at least once
      const delivered = () => new Set(receiver.received.filter((r) => r.id === x || r.id === y).map((r) => r.eventId)).size;
      await until("every event after the restart", () => delivered() === 3 + 6, 30_000);
      expect(receiver.received.every((r) => r.validSignature)).toBe(true);
    } finally {
      await killHard(proc.child);
    }
  });
});
