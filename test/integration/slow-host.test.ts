// A slow host costs only its own slots (issue 48, item 5): one crawl over fast hosts and one host that answers every
// request (robots.txt too) in 30 s, whose links come first on the start page. The fast hosts' pages are all stored at
// normal speed, long before the slow host's first answer: they do not wait behind its pages in the partition they share
// with it (some of them are chosen to share it), nor for its fetch slots. Before (a batch of fetch.tasks handled with at
// most FETCH_CONCURRENCY of its tasks at once, the next batch after the whole batch was done) the slow host's waiting
// pages held the batch's slots and its partition for minutes.
import { createServer, type ServerResponse, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { javaPartition } from "../../pipeline/runtime/java-partitioner.ts";
import { afterAll, describe, expect, it } from "vitest";
import { partitionOf } from "../../pipeline/runtime/partition-of.ts";
import { MODES, getJson, postJson, startTrawl, type Mode } from "./harness.ts";

const SLOW_MS = 30_000;
const FAST_HOSTS = 6;
const FAST_PAGES = 10;
/** more than FETCH_CONCURRENCY (16): before, they took every slot of the batch they were in */
const SLOW_PAGES = 40;
const PARTITIONS = 4; // the harness's KAFKA_PARTITIONS and EMBEDDED_PARTITIONS

interface Site {
  origin: string;
  key: string;
  close(): Promise<void>;
}

async function site(handler: (path: string, res: ServerResponse) => void): Promise<Site & { server: Server }> {
  const server = createServer((req, res) => handler(req.url ?? "/", res));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const key = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    server, origin: `http://${key}`, key,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

const html = (res: ServerResponse, title: string, body = "") =>
  res.writeHead(200, { "content-type": "text/html" }).end(`<html><head><title>${title}</title></head><body><h1>${title}</h1><p>page ${title}</p>${body}</body></html>`);

/** The partition of fetch.tasks a host's tasks go to (keyed by host): the Java client's partitioner (Trawl's producer), or the embedded bus's. */
function partitionOfHost(mode: Mode, key: string): number {
  if (mode === "embedded") return partitionOf(key, PARTITIONS);
  return javaPartition(key, PARTITIONS);
}

describe.each(MODES)("%s mode: one host answering in 30 s among fast ones", (mode) => {
  const open: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const x of open.reverse()) await x.close();
  });

  it("the fast hosts' pages are stored at normal speed, not behind the slow host", async () => {
    // the slow host answers after SLOW_MS, or at once after `release` (the end of the test: its pages are not waited for)
    const pending = new Map<NodeJS.Timeout, ServerResponse>();
    let slowAnswered = 0;
    let released = false;
    const release = () => {
      released = true;
      for (const [t, res] of pending) {
        clearTimeout(t);
        html(res, "slow");
      }
      pending.clear();
    };
    const slow = await site((_path, res) => {
      if (released) return void html(res, "slow");
      const t = setTimeout(() => {
        pending.delete(t);
        slowAnswered++;
        html(res, "slow");
      }, SLOW_MS);
      pending.set(t, res);
    });
    open.push({ close: async () => {
      release();
      await slow.close();
    } });
    const slowPartition = partitionOfHost(mode, slow.key);
    // fast hosts: two share the slow host's partition of fetch.tasks, the others do not
    const fast: Site[] = [];
    let sharing = 0;
    for (let tries = 0; fast.length < FAST_HOSTS && tries < 200; tries++) {
      const s = await site((path, res) => {
        if (path === "/robots.txt") return void res.writeHead(404).end();
        if (path === "/") {
          // the start page: the slow host's pages first, then every fast page
          const links = [
            ...Array.from({ length: SLOW_PAGES }, (_, i) => `${slow.origin}/s${i}`),
            ...fast.flatMap((f) => Array.from({ length: FAST_PAGES }, (_, i) => `${f.origin}/p${i}`)),
          ];
          return void html(res, "start", links.map((l) => `<a href="${l}">${l}</a>`).join(" "));
        }
        // a fast page links one more (depth 2: a later batch of fetch.tasks than the slow host's pages)
        setTimeout(() => html(res, path, path.startsWith("/p") ? `<a href="/q${path.slice(2)}">next</a>` : ""), 10);
      });
      const shares = partitionOfHost(mode, s.key) === slowPartition;
      if (shares ? sharing < 2 : fast.length - sharing < FAST_HOSTS - 2) {
        fast.push(s);
        open.push(s);
        if (shares) sharing++;
      } else await s.close();
    }
    expect(sharing).toBe(2);

    const trawl = await startTrawl({ mode, render: "never" });
    open.push({ close: () => trawl.stop() });
    const wanted = 1 + 2 * FAST_HOSTS * FAST_PAGES;
    const t0 = Date.now();
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${fast[0]?.origin}/`, limit: 1000, crawlEntireDomain: true, sitemap: "skip" });
    const id = res.body.id as string;
    let completed = 0;
    while (completed < wanted && Date.now() - t0 < SLOW_MS) {
      completed = (await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`)).body.completed;
      await new Promise((r) => setTimeout(r, 200));
    }
    const fastMs = Date.now() - t0;
    console.log(`${mode}: ${completed} of the ${wanted} fast pages stored after ${fastMs} ms (the slow host answers after ${SLOW_MS} ms)`);
    expect(slowAnswered).toBe(0);
    expect(completed).toBeGreaterThanOrEqual(wanted);
    // blocked, they would have waited for the slow host's answers (30 s); unblocked they take a few seconds (more on a
    // loaded machine)
    expect(fastMs).toBeLessThan(25_000);
    await fetch(`${trawl.api}/v2/crawl/${id}`, { method: "DELETE" });
    release(); // what waits for the slow host ends at once: the stop does not wait 30 s

  }, 90_000);
});
