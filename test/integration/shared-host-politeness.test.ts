// One politeness per host across crawls and fetch-render replicas (issue 48, item 4): five crawls at once of one host
// that answers 429 to a request that finds 6 already in flight. fetch.tasks is keyed by host, so in cluster mode one of
// the two fetch-render replicas owns the host for every crawl and its one limiter holds the host to what it accepts:
// the host never sees more than 6 in flight, gets no more 429s than one crawl alone, and every crawl completes. Keyed
// crawl + host (before), each replica believed it owned the host: 7+ in flight and 429s. The crawls take turns on the
// host: four small crawls submitted after a large one has its pages queued finish while the large one still runs.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Admin, consumerGroupDescribeV0 } from "@platformatic/kafka";
import { afterAll, describe, expect, it } from "vitest";
import { ROLES, start, type Running } from "../../app/start.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { MODES, getJson, postJson, startTrawl, type Instance, type Mode } from "./harness.ts";

const LIMIT = 6;
const ALONE = 120;
/** long enough for the small crawls' first pages to come through the pipeline (seconds on a loaded machine) while it runs */
const BIG = 600;
const SMALL = 8;
const SMALLS = 4;

interface Host {
  origin: string;
  /** most requests in flight at once as the host saw them (an arrival counts itself), and its 429s */
  maxInFlight: number;
  refused: number;
  reset(): void;
  close(): Promise<void>;
}

/** `/cK/` links `/cK/0` .. `/cK/(n-1)` (n from the query, `?n=`); a page takes 100 ms (a busy test machine's own stalls stay
 * under the 2x + 200 ms that lowers a host's limit); 429 past LIMIT in flight. */
async function limitedHost(): Promise<Host> {
  let inFlight = 0;
  const host = { maxInFlight: 0, refused: 0 };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === "/robots.txt" || url.pathname.endsWith(".xml")) return void res.writeHead(404).end();
    inFlight++;
    host.maxInFlight = Math.max(host.maxInFlight, inFlight);
    if (inFlight > LIMIT) {
      host.refused++;
      inFlight--;
      return void res.writeHead(429, { "content-type": "text/plain" }).end("too many at once");
    }
    setTimeout(() => {
      inFlight--;
      const n = Number(url.searchParams.get("n") ?? 0);
      const links = Array.from({ length: n }, (_, i) => `<a href="${url.pathname}${i}">${i}</a>`).join(" ");
      res.writeHead(200, { "content-type": "text/html" }).end(`<html><head><title>${url.pathname}</title></head><body><h1>${url.pathname}</h1><p>page ${url.pathname}</p>${links}</body></html>`);
    }, 100);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(host, {
    origin,
    reset: () => Object.assign(host, { maxInFlight: 0, refused: 0 }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  });
}

interface Deployment {
  api: string;
  stop(): Promise<void>;
}

/** Embedded: one process. Cluster: every role but fetch-render in one process, and two fetch-render replicas. */
async function deploy(mode: Mode): Promise<Deployment> {
  const settings = { mode, render: "never", hostMaxConcurrency: 4, hostMaxConcurrencyCeiling: LIMIT, fetchRetries: 2 } as const;
  if (mode === "embedded") {
    const trawl = await startTrawl(settings);
    return { api: trawl.api, stop: () => trawl.stop() };
  }
  const trawl: Instance = await startTrawl(settings, undefined, ROLES.filter((r) => r !== "fetch-render" && r !== "render"));
  const log = createLogger(trawl.config.logLevel, { test: "fetch-render replica" });
  const replicas: Running[] = [];
  for (let i = 0; i < 2; i++) replicas.push(await start(["fetch-render"], trawl.config, log));
  await stableGroup(trawl.config.kafkaBrokers, `${trawl.config.groupPrefix}fetch-render`, 2);
  return {
    api: trawl.api,
    async stop() {
      for (const r of replicas) await r.stop();
      await trawl.stop();
    },
  };
}

/**
 * A group's state and member count: with the classic protocol's DescribeGroups, or for a consumer-protocol group
 * (KIP-848, which DescribeGroups shows as Dead) with ConsumerGroupDescribe at its coordinator.
 */
async function groupState(admin: Admin, group: string): Promise<{ state: string; members: number } | undefined> {
  const classic = (await admin.describeGroups({ groups: [group] })).get(group);
  if (classic && classic.state !== "Dead" && classic.state !== "DEAD") return { state: classic.state, members: classic.members.size };
  const [coordinator] = await admin.findCoordinator({ keyType: 0, keys: [group] });
  if (!coordinator) return undefined;
  const connection = (await admin.connectToBrokers([coordinator.nodeId])).get(coordinator.nodeId);
  if (!connection) return undefined;
  const [g] = (await consumerGroupDescribeV0.api.async(connection, [group], false)).groups;
  return g && g.errorCode === 0 ? { state: g.groupState, members: g.members.length } : undefined;
}

/** Waits until the group has `members` members and is stable (a rebalance mid-crawl would hand the host over). */
async function stableGroup(brokers: string, group: string, members: number): Promise<void> {
  const admin = new Admin({ clientId: "shared-host-test", bootstrapBrokers: brokers.split(",") });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const g = await groupState(admin, group).catch(() => undefined);
      if (g?.state.toLowerCase() === "stable" && g.members === members) return;
      if (Date.now() > deadline) throw new Error(`group ${group} not stable with ${members} members: ${g?.state} ${g?.members}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.close();
  }
}

const crawlOf = (api: string, host: Host, name: string, pages: number) =>
  postJson(`${api}/v2/crawl`, { url: `${host.origin}/${name}/?n=${pages - 1}`, limit: pages, sitemap: "skip" }).then((r) => r.body.id as string);

/** Polls the crawls until each has ended; the order in which they ended, with each one's last status. */
async function ends(api: string, ids: string[], timeoutMs: number): Promise<{ order: string[]; last: Map<string, any> }> {
  const last = new Map<string, any>();
  const order: string[] = [];
  const deadline = Date.now() + timeoutMs;
  while (order.length < ids.length) {
    for (const id of ids.filter((x) => !order.includes(x))) {
      const { body } = await getJson(`${api}/v2/crawl/${id}?limit=1`);
      last.set(id, body);
      if (body.status !== "scraping") order.push(id);
    }
    if (Date.now() > deadline) throw new Error(`crawls still scraping: ${JSON.stringify([...last.values()].map((b) => [b.status, b.completed, b.total]))}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { order, last };
}

describe.each(MODES)("%s mode: five crawls of one host that answers 429 past 6 in flight", (mode) => {
  const open: { stop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const x of open.reverse()) await x.stop();
  });

  it("the host never sees more than 6 in flight, no more 429s than one crawl alone, every crawl completes, small crawls are not starved", async () => {
    const host = await limitedHost();
    open.push({ stop: host.close });
    const t0 = Date.now();
    const trawl = await deploy(mode);
    open.push(trawl);
    console.log(`${mode}: deployed in ${Date.now() - t0} ms`);

    // one crawl alone
    const alone = await crawlOf(trawl.api, host, "alone", ALONE);
    const aloneEnd = (await ends(trawl.api, [alone], 60_000)).last.get(alone);
    expect(aloneEnd.status).toBe("completed");
    expect(aloneEnd.completed).toBe(ALONE);
    console.log(`${mode}: crawl alone ended at ${Date.now() - t0} ms`);
    const one = { maxInFlight: host.maxInFlight, refused: host.refused };
    host.reset();

    // five at once: a large one, then four small ones once its pages are queued
    const big = await crawlOf(trawl.api, host, "big", BIG);
    for (let i = 0; i < 200; i++) {
      const { body } = await getJson(`${trawl.api}/v2/crawl/${big}?limit=1`);
      if (body.total > 1 && body.completed >= 6) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const smalls = await Promise.all(Array.from({ length: SMALLS }, (_, i) => crawlOf(trawl.api, host, `small${i}`, SMALL)));
    const { order, last } = await ends(trawl.api, [big, ...smalls], 60_000);
    console.log(`${mode}: one crawl alone: ${one.maxInFlight} in flight at most, ${one.refused} x 429; five crawls: ${host.maxInFlight} in flight at most, ${host.refused} x 429; end order ${order.map((id) => (id === big ? "big" : "small")).join(" ")}`);

    for (const id of [big, ...smalls]) {
      expect(last.get(id).status).toBe("completed");
      expect(last.get(id).completed).toBe(id === big ? BIG : SMALL);
    }
    expect(one.maxInFlight).toBeLessThanOrEqual(LIMIT);
    expect(host.maxInFlight).toBeLessThanOrEqual(LIMIT);
    expect(host.refused).toBeLessThanOrEqual(one.refused);
    // fair turns by crawl: the small crawls do not wait behind the large one's queued pages
    expect(order.at(-1)).toBe(big);
  }, 90_000);
});
