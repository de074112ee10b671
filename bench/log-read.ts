// Start-up read of a large embedded append log: one process reads a page cache file (default 200 MB of ~17 KB
// entries, written once under TMPDIR) with `readLines`, opens it as the page cache, then opens a crawl store whose
// documents are as large (one crawl of ~17 KB documents, in segments since data format 4: a checkout before that reads
// only a documents.jsonl), and prints the times.
// `node bench/log-read.ts [checkout] [MB] [expire]` reads with the code of another checkout (e.g. a base commit's sources
// extracted with `git archive`), so two commits are compared on the same file; run it a few times in turn. With
// `expire`, the cache opens a copy of the file with half of its entries expired (so it rewrites the file).
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppendLog } from "../pipeline/runtime/append-log.ts";
import { EmbeddedCrawlStore } from "../pipeline/store/embedded-crawl-store.ts";

const root = resolve(process.argv[2] ?? join(import.meta.dirname, ".."));
const mb = Number(process.argv[3] ?? 200);
const dir = join(process.env.TMPDIR ?? tmpdir(), `trawl-log-read-${mb}`);
const file = join(dir, "store", "cache.jsonl");

/** An HTML body of ~17 KB: mostly ASCII, a few multi-byte characters as real pages have. */
function body(i: number): string {
  const para = `<p>Paragraph ${i} of a page — with “quotes”, café and naïve words, and a <a href="/link/${i}">link</a>.</p>\n`;
  return `<!doctype html><html><head><title>Page ${i}</title></head><body>${para.repeat(Math.ceil(16_300 / para.length))}</body></html>`;
}

async function write(): Promise<void> {
  const log = new AppendLog(file);
  const target = mb * 1024 * 1024;
  for (let i = 0; log.size < target; i += 100) {
    const lines = Array.from({ length: 100 }, (_, k) => {
      const n = i + k;
      const url = `http://bench.test/page/${n}`;
      return JSON.stringify({ key: `${n}`.padStart(64, "0"), url, finalUrl: url, statusCode: 200, contentType: "text/html", body: body(n), storedAt: 1000 + n });
    });
    await log.append(lines).written;
  }
  await log.close();
}

/** Bytes of the store's documents: the segments and a documents.jsonl of an earlier release. */
function docsBytes(): number {
  const segments = join(storeDir, "store", "documents");
  const legacy = statSync(join(storeDir, "store", "documents.jsonl"), { throwIfNoEntry: false })?.size ?? 0;
  return existsSync(segments) ? readdirSync(segments).reduce((sum, f) => sum + statSync(join(segments, f)).size, legacy) : legacy;
}

/** A crawl store with one crawl of documents as large as the cache file. */
async function writeStore(): Promise<void> {
  const store = await EmbeddedCrawlStore.open(storeDir, 0);
  const options = { limit: 1e6, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown" as const], onlyMainContent: true };
  await store.saveCrawls([{ crawlId: "c", version: 1, teamId: "t", url: "http://bench.test/", options, webhook: "", status: "scraping", total: 0, completed: 0, failed: 0, creditsUsed: 0, tokensUsed: 0, discoveryDone: true, createdAt: 1, updatedAt: 1, completedAt: 0, expiresAt: 1e15, error: "" }]);
  for (let i = 0; docsBytes() < mb * 1024 * 1024; i += 100) {
    await store.insertDocuments(Array.from({ length: 100 }, (_, k) => {
      const n = i + k;
      const url = `http://bench.test/page/${n}`;
      const doc = JSON.stringify({ markdown: body(n).replace(/<[^>]+>/g, ""), metadata: { sourceURL: url, url, statusCode: 200, title: `Page ${n}` } });
      return { crawlId: "c", seq: n, urlKey: url, finalKey: url, scrapeId: `s${n}`, url, statusCode: 200, credits: 1, storedAt: 1000 + n, doc };
    }));
  }
  await store.close();
}

const storeDir = `${dir}-store`;
if (!existsSync(file)) await write();
if (docsBytes() === 0) await writeStore();
const { readLines } = (await import(join(root, "pipeline/runtime/append-log.ts"))) as typeof import("../pipeline/runtime/append-log.ts");
const { EmbeddedPageCache } = (await import(join(root, "pipeline/store/page-cache.ts"))) as typeof import("../pipeline/store/page-cache.ts");

const t0 = performance.now();
let records = 0;
for await (const _ of readLines(file)) records++;
const readMs = performance.now() - t0;
const expire = process.argv[4] === "expire";
const cacheDir = expire ? `${dir}-expire` : dir;
if (expire) {
  mkdirSync(join(cacheDir, "store"), { recursive: true });
  copyFileSync(file, join(cacheDir, "store", "cache.jsonl"));
}
const t1 = performance.now();
const cache = await EmbeddedPageCache.open(cacheDir, expire ? 1000 + records / 2 : 0);
const openMs = performance.now() - t1;
await cache.close();
if (expire) rmSync(cacheDir, { recursive: true, force: true });
const { EmbeddedCrawlStore: Store } = (await import(join(root, "pipeline/store/embedded-crawl-store.ts"))) as typeof import("../pipeline/store/embedded-crawl-store.ts");
const t2 = performance.now();
const store = await Store.open(storeDir, 0);
const storeOpenMs = performance.now() - t2;
await store.close();
const size = statSync(file).size;
console.log(JSON.stringify({ root, fileMB: +(size / 1048576).toFixed(1), records, readLinesMs: Math.round(readMs), readMBps: Math.round(size / 1048576 / (readMs / 1000)), [expire ? "cacheOpenExpireHalfMs" : "cacheOpenMs"]: Math.round(openMs), storeOpenMs: Math.round(storeOpenMs), storeDocsMB: +(docsBytes() / 1048576).toFixed(1), peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024) }));
