// Status GET latency with authentication on vs off (embedded mode, one finished crawl of 200 pages, 2,000 sequential
// GETs of its status after a warm-up). The key check must add < 1 ms at p50.
// usage: node bench/auth.ts
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { start, ROLES } from "../app/start.ts";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { startSyntheticSite } from "./synthetic-site.ts";

const READS = 2000;
const site = await startSyntheticSite(200);

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;

async function measure(auth: boolean): Promise<{ p50Ms: number; p99Ms: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-auth-"));
  const config = loadConfig(process.env, { mode: "embedded", dataDir, port: 0, allowPrivateCrawlTargets: true, logLevel: "warn", useDbAuthentication: auth });
  const running = await start(ROLES, config, createLogger("warn"));
  const api = `http://127.0.0.1:${(running.server?.address() as AddressInfo).port}`;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (auth) {
    const created = (await (await fetch(`${api}/admin/${config.adminKey}/keys`, { method: "POST", headers, body: JSON.stringify({ team: "bench" }) })).json()) as { key: string };
    headers.authorization = `Bearer ${created.key}`;
  }
  const { id } = (await (await fetch(`${api}/v2/crawl`, { method: "POST", headers, body: JSON.stringify({ url: `${site.origin}/site/p0.html`, limit: 200, crawlEntireDomain: true }) })).json()) as { id: string };
  for (;;) {
    const s = (await (await fetch(`${api}/v2/crawl/${id}?limit=1`, { headers })).json()) as { status: string };
    if (s.status !== "scraping") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const times: number[] = [];
  for (let i = 0; i < READS + 200; i++) {
    const t0 = performance.now();
    const res = await fetch(`${api}/v2/crawl/${id}?limit=10`, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    if (i >= 200) times.push(performance.now() - t0);
  }
  await running.stop();
  rmSync(dataDir, { recursive: true, force: true });
  times.sort((a, b) => a - b);
  return { p50Ms: +quantile(times, 0.5).toFixed(3), p99Ms: +quantile(times, 0.99).toFixed(3) };
}

const off = await measure(false);
const on = await measure(true);
await site.close();
console.log(JSON.stringify({ reads: READS, authOff: off, authOn: on, addedP50Ms: +(on.p50Ms - off.p50Ms).toFixed(3), addedP99Ms: +(on.p99Ms - off.p99Ms).toFixed(3) }));
