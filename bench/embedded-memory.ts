// Embedded mode: crawl a synthetic site through the public API, report pages/s and the process's memory.
// usage: node bench/embedded-memory.ts [pages]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { start, ROLES } from "../app/start.ts";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { startSyntheticSite } from "./synthetic-site.ts";

const pages = Number(process.argv[2] ?? 1000);
const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
const site = await startSyntheticSite(pages);
const config = loadConfig(process.env, { mode: "embedded", dataDir, port: 0, allowPrivateCrawlTargets: true, logLevel: "warn" });
const t0 = performance.now();
const running = await start(ROLES, config, createLogger("warn"));
const readyMs = performance.now() - t0;
const api = `http://127.0.0.1:${(running.server?.address() as AddressInfo).port}`;
const mb = (n: number) => Math.round(n / 1024 / 1024);
const before = process.memoryUsage();
const t1 = performance.now();
const { id } = (await (await fetch(`${api}/v2/crawl`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${site.origin}/site/p0.html`, limit: pages + 10, crawlEntireDomain: true }) })).json()) as { id: string };
let status: { status: string; completed: number };
for (;;) {
  status = (await (await fetch(`${api}/v2/crawl/${id}?limit=1`)).json()) as typeof status;
  if (status.status !== "scraping") break;
  await new Promise((r) => setTimeout(r, 200));
}
const secs = (performance.now() - t1) / 1000;
global.gc?.();
const after = process.memoryUsage();
console.log(JSON.stringify({ pages: status.completed, status: status.status, seconds: +secs.toFixed(2), pagesPerSecond: +(status.completed / secs).toFixed(1), readyMs: Math.round(readyMs), rssBeforeMB: mb(before.rss), rssAfterMB: mb(after.rss), heapUsedAfterMB: mb(after.heapUsed), externalAfterMB: mb(after.external), arrayBuffersAfterMB: mb(after.arrayBuffers) }));
await running.stop();
await site.close();
rmSync(dataDir, { recursive: true, force: true });
