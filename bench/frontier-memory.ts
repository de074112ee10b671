// Frontier memory per URL: feeds the reducer a synthetic crawl of N URLs (default 200,000) and measures the heap
// the crawl state holds, after a full GC. usage: node --expose-gc bench/frontier-memory.ts [N]
import type { CrawlOptions, FrontierInboxMessage } from "../schemas/index.ts";
import { keyOf, reduce, type CrawlState } from "../pipeline/frontier/reducer.ts";

const n = Number(process.argv[2] ?? 200_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const options: CrawlOptions = { limit: n + 10, crawlEntireDomain: true, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true, sitemap: "skip" };
const start = "https://docs.example.com/";
gc();
const before = process.memoryUsage().heapUsed;
let state: CrawlState | null = reduce(null, { type: "CrawlRequested", crawlId: "c", url: start, options, createdAt: 0 }, 0).state;
const batch = 1000;
const t0 = performance.now();
for (let i = 0; i < n; i += batch) {
  const links = Array.from({ length: Math.min(batch, n - i) }, (_, j) => `https://docs.example.com/section-${(i + j) % 97}/topic/page-${i + j}.html`);
  const msg: FrontierInboxMessage = { type: "LinksDiscovered", crawlId: "c", urlKey: keyOf(start, options), url: start, depth: 0, links };
  state = reduce(state, msg, 1).state;
}
// half of them done: states change, the map does not grow
for (let i = 0; i < n; i += 2) {
  state = reduce(state, { type: "PageDone", crawlId: "c", urlKey: keyOf(`https://docs.example.com/section-${i % 97}/topic/page-${i}.html`, options), credits: 1 }, 2).state;
}
const ms = performance.now() - t0;
gc();
const after = process.memoryUsage().heapUsed;
const perUrl = (after - before) / (state?.urls.size ?? 1);
const result = { urls: state?.urls.size, bytesPerUrl: Math.round(perUrl), target: 150, met: perUrl <= 150, reduceMsPerUrl: +(ms / n / 1.5).toFixed(4) };
console.log(JSON.stringify(result));
