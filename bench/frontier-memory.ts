// Frontier memory per URL: feeds the reducer a synthetic crawl of N URLs (default 1,000,000; half of them done) and
// measures the memory its crawl state holds (V8 heap + the typed arrays of its URL table, which live outside the heap)
// after full GCs. Against issue 48's goal of at most 16 bytes of RAM per seen URL it reports what the state grows by
// per URL from 10 % to 100 % of the crawl (`bytesPerUrl`), and also the whole state per URL at N (`bytesPerUrlAtN`),
// which includes what a crawl holds whatever its size: the URL log's first CRAWL_URL_LOG_MAX (10,000) URLs with their
// text (`fixedPerCrawlMB`, the whole state at 10 % less its URL table).
// usage: node --expose-gc bench/frontier-memory.ts [N]
import type { CrawlOptions, FrontierInboxMessage } from "../schemas/index.ts";
import { keyOf, reduce, type CrawlState } from "../pipeline/frontier/reducer.ts";

const n = Number(process.argv[2] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const options: CrawlOptions = { limit: n + 10, crawlEntireDomain: true, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const start = "https://docs.example.com/";
/** Heap and array buffers after full GCs (a freed backing store is released after the collection, off the thread). */
const held = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};
/** The URL table's bytes (0 before it existed: the state held a Map, counted in the heap). */
const tableBytes = (s: CrawlState | null) => Number((s?.urls as { bytes?: number } | undefined)?.bytes ?? 0);
const url = (i: number) => `https://docs.example.com/section-${i % 97}/topic/page-${i}.html`;
const before = await held();
let state: CrawlState | null = reduce(null, { type: "CrawlRequested", crawlId: "c", url: start, options, createdAt: 0 }, 0).state;
const batch = 1000;
const tenth = Math.ceil(n / 10 / batch) * batch;
let at10 = { bytes: 0, urls: 0, table: 0 };
let ms = 0;
for (let i = 0; i < n; i += batch) {
  if (i === tenth) at10 = { bytes: (await held()) - before, urls: state?.urls.size ?? 0, table: tableBytes(state) };
  const t0 = performance.now();
  const links = Array.from({ length: Math.min(batch, n - i) }, (_, j) => url(i + j));
  const msg: FrontierInboxMessage = { type: "LinksDiscovered", crawlId: "c", urlKey: keyOf(start, options), url: start, depth: 0, links };
  state = reduce(state, msg, 1).state;
  ms += performance.now() - t0;
}
// half of them done: states change, the table does not grow
const t1 = performance.now();
for (let i = 0; i < n; i += 2) {
  state = reduce(state, { type: "PageDone", crawlId: "c", urlKey: keyOf(url(i), options), credits: 1 }, 2).state;
}
ms += performance.now() - t1;
const bytes = (await held()) - before;
const urls = state?.urls.size ?? 1;
const perUrl = (bytes - at10.bytes) / (urls - at10.urls);
const result = {
  urls, bytesPerUrl: +perUrl.toFixed(1), target: 16, met: perUrl <= 16, bytesPerUrlAtN: +(bytes / urls).toFixed(1),
  tableBytesPerUrl: +(tableBytes(state) / urls).toFixed(1), fixedPerCrawlMB: +((at10.bytes - at10.table) / 1e6).toFixed(1),
  reduceMsPerUrl: +(ms / n / 1.5).toFixed(4),
};
console.log(JSON.stringify(result));
