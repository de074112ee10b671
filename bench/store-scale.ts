// `node --expose-gc bench/store-scale.ts [checkout]` (`npm run bench -- store-scale`): the embedded store at the end of
// a DOCS-document crawl (1,000,000 by default), filled through the store port directly (no crawl: a few minutes), with
// the store code of this checkout or of another one (e.g. the base commit's sources from `git archive`, with a
// node_modules link). Per document: a URL row when found and one when done (as the frontier writes them), the document
// (DOC_BYTES of markdown) and a page cache entry. Reports the process's RSS before and after the fill (bytes per
// document; over the second half too, without what is held once; `held`: V8 heap used + memory outside it after a full
// GC, RSS also counts what the allocator keeps), then starts `trawl all --embedded` on that DATA_DIR and on an empty one: time to the first /health answer
// and RSS, and the latency of GET /v2/crawl/:id?skip=N (`next` paging) and GET /v2/crawl/:id/urls?skip=N on it.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const { EmbeddedCrawlStore } = (await import(join(root, "pipeline/store/embedded-crawl-store.ts"))) as typeof import("../pipeline/store/embedded-crawl-store.ts");
const { EmbeddedPageCache } = (await import(join(root, "pipeline/store/page-cache.ts"))) as typeof import("../pipeline/store/page-cache.ts");

const DOCS = Number(process.env.DOCS ?? 1_000_000);
const DOC_BYTES = Number(process.env.DOC_BYTES ?? 1024);
const HOSTS = 1000;
const BATCH = 100;
const CRAWL = randomUUID();
/** every Trawl started (stopped at the end, also after an error) */
const children: ChildProcess[] = [];
const mb = (n: number) => +(n / 1048576).toFixed(1);
const rss = () => {
  global.gc?.();
  return process.memoryUsage().rss;
};
/** what the process holds after a full GC: the V8 heap in use and the memory outside it (Buffers, typed arrays) */
const held = () => {
  global.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};
const urlOf = (i: number) => `https://h${i % HOSTS}.example.test/p/${Math.floor(i / HOSTS)}`;

const dir = mkdtempSync(join(tmpdir(), "trawl-store-scale-"));
const empty = mkdtempSync(join(tmpdir(), "trawl-store-scale-empty-"));

async function fill(): Promise<Record<string, number>> {
  const now = Date.now();
  const record = (status: "scraping" | "completed", completed: number) => ({
    crawlId: CRAWL, version: completed + 1, teamId: "bypass", url: urlOf(0), webhook: "", status, total: DOCS, completed, failed: 0, creditsUsed: completed,
    tokensUsed: 0, discoveryDone: status === "completed", createdAt: now, updatedAt: Date.now(), completedAt: status === "completed" ? Date.now() : 0,
    expiresAt: now + 30 * 86_400_000, error: "",
    options: { limit: DOCS, crawlEntireDomain: true, allowSubdomains: true, formats: ["markdown" as const], onlyMainContent: true },
  });
  const rssEmpty = rss();
  const store = await EmbeddedCrawlStore.open(dir, now);
  const cache = await EmbeddedPageCache.open(dir, now - 86_400_000);
  await cache.get("0".repeat(64), 0); // the cache in use: its table in memory, as a crawl's first maxAge read makes it
  const rssOpen = rss();
  const heldOpen = held();
  await store.saveCrawls([record("scraping", 0)]);
  const body = "x".repeat(DOC_BYTES);
  const t0 = performance.now();
  let half = { rss: 0, held: 0 };
  for (let from = 0; from < DOCS; from += BATCH) {
    if (from === DOCS / 2) half = { rss: rss(), held: held() };
    const n = Math.min(BATCH, DOCS - from);
    const ids = Array.from({ length: n }, (_, k) => from + k);
    await store.saveUrls(ids.map((i) => ({ crawlId: CRAWL, urlKey: urlOf(i), url: urlOf(i), depth: 1, state: 0 as const, version: 1, reason: "queued" as const, detail: "", from: urlOf(0) })));
    await store.insertDocuments(ids.map((i) => ({
      crawlId: CRAWL, seq: i, urlKey: urlOf(i), finalKey: urlOf(i), scrapeId: `s${i}`, url: urlOf(i), statusCode: 200, credits: 1, storedAt: Date.now(),
      doc: JSON.stringify({ markdown: body, metadata: { sourceURL: urlOf(i), statusCode: 200 } }),
    })));
    await store.saveUrls(ids.map((i) => ({ crawlId: CRAWL, urlKey: urlOf(i), url: "", depth: 1, state: 1 as const, version: 2, reason: "fetched" as const })));
    cache.put(ids.map((i) => ({ key: `${String(i).padStart(64, "0")}`, url: urlOf(i), finalUrl: urlOf(i), statusCode: 200, contentType: "text/html", body: "<html></html>", storedAt: Date.now() })));
  }
  const fillS = (performance.now() - t0) / 1000;
  await store.saveCrawls([record("completed", DOCS)]);
  const rssFilled = rss();
  const heldFilled = held();
  await store.close();
  await cache.close();
  // the store's own part of a restart, in this process: open both again and read one page
  const t1 = performance.now();
  const reopened = await EmbeddedCrawlStore.open(dir, Date.now());
  const cacheAgain = await EmbeddedPageCache.open(dir, now - 86_400_000);
  const reopenMs = Math.round(performance.now() - t1);
  const t2 = performance.now();
  await reopened.pageDocuments(CRAWL, DOCS - 100, 10 * 1048576, 100);
  const pageAfterReopenMs = +(performance.now() - t2).toFixed(1);
  await reopened.close();
  await cacheAgain.close();
  return {
    reopenMs, pageAfterReopenMs, docs: DOCS, fillS: +fillS.toFixed(1), rssEmptyMB: mb(rssEmpty), rssOpenMB: mb(rssOpen), rssFilledMB: mb(rssFilled), bytesPerDoc: Math.round((rssFilled - rssOpen) / DOCS), heldBytesPerDoc: Math.round((heldFilled - heldOpen) / DOCS),
    // the growth over the second half: what each document adds, without what the store holds once for all of them
    rssSecondHalfBytesPerDoc: Math.round((rssFilled - half.rss) / (DOCS / 2)), heldSecondHalfBytesPerDoc: Math.round((heldFilled - half.held) / (DOCS / 2)) };
}

const freePort = () => new Promise<number>((ok) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const port = (s.address() as { port: number }).port;
    s.close(() => ok(port));
  });
});
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

/** Starts Trawl on `dataDir`; resolves at its first /health answer. */
async function startTrawl(dataDir: string): Promise<{ child: ChildProcess; api: string; readyMs: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(root, "bin/trawl.js"), "all", "--embedded"], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: "warn", USE_DB_AUTHENTICATION: "false" }, stdio: ["ignore", "ignore", "inherit"],
  });
  children.push(child);
  const api = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`trawl exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${api}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, api, readyMs: Math.round(performance.now() - t0) };
}

const stop = (child: ChildProcess) => new Promise<void>((ok) => {
  child.once("exit", () => ok());
  child.kill("SIGTERM");
});

/** ms of one GET (the body read whole), and the body. */
async function timed(url: string): Promise<{ ms: number; body: Record<string, unknown> }> {
  const t0 = performance.now();
  const res = await fetch(url);
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return { ms: +(performance.now() - t0).toFixed(1), body };
}

async function restart(): Promise<Record<string, unknown>> {
  const base = await startTrawl(empty);
  await new Promise((r) => setTimeout(r, 3000));
  const rssEmptyStart = rssOf(base.child.pid as number);
  await stop(base.child);

  const t = await startTrawl(dir);
  const rssAtAnswer = rssOf(t.child.pid as number);
  await new Promise((r) => setTimeout(r, 3000));
  const rssSettled = rssOf(t.child.pid as number);
  const status = (skip: number) => timed(`${t.api}/v2/crawl/${CRAWL}?skip=${skip}&limit=100`);
  const urls = (skip: number) => timed(`${t.api}/v2/crawl/${CRAWL}/urls?skip=${skip}&limit=100`);
  const paging: Record<string, number[]> = { statusFirst: [], statusMiddle: [], statusEnd: [], nextWalk: [], urlsFirst: [], urlsEnd: [] };
  for (let round = 0; round < 3; round++) {
    paging.statusFirst?.push((await status(0)).ms);
    paging.statusMiddle?.push((await status(Math.floor(DOCS / 2))).ms);
    paging.statusEnd?.push((await status(DOCS - 50)).ms);
    paging.urlsFirst?.push((await urls(0)).ms);
    paging.urlsEnd?.push((await urls(DOCS - 50)).ms);
  }
  // follow `next` from the middle for five pages
  let next: string | undefined = `${t.api}/v2/crawl/${CRAWL}?skip=${Math.floor(DOCS / 2)}&limit=100`;
  for (let i = 0; i < 5 && next; i++) {
    const r = await timed(next);
    paging.nextWalk?.push(r.ms);
    next = r.body.next as string | undefined;
  }
  const rssAfterReads = rssOf(t.child.pid as number);
  await stop(t.child);
  return {
    rssEmptyStartMB: mb(rssEmptyStart), emptyReadyMs: base.readyMs, readyMs: t.readyMs, rssAtFirstAnswerMB: mb(rssAtAnswer), rssSettledMB: mb(rssSettled),
    rssAfterReadsMB: mb(rssAfterReads), pagingMs: paging,
  };
}

try {
  const filled = await fill();
  console.error(`store-scale: filled ${JSON.stringify(filled)}`);
  const restarted = await restart();
  console.log(JSON.stringify({ root, docBytes: DOC_BYTES, ...filled, ...restarted }));
} finally {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  rmSync(empty, { recursive: true, force: true });
}
