// /metrics in both modes: a crawl of a small site moves the page counters by exactly its pages, the consumer lag
// gauge covers every stage's topic per partition, running crawls are a gauge, the render pool reports pages in use,
// pool size, render time and a browser restart, and a role without the API serves /metrics on METRICS_PORT.
import { execFileSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { start } from "../../app/start.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const PAGES = ["/", "/a", "/b", "/c", "/d"];

/** Five linked HTML pages and a webhook receiver (POST /hook, counted); anything else is a 404. */
async function startSite(): Promise<{ origin: string; server: Server; hooks: string[] }> {
  const hooks: string[] = [];
  const server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/hook") {
      let body = "";
      req.on("data", (c: Buffer) => (body += c));
      req.on("end", () => {
        hooks.push(String(JSON.parse(body).type));
        res.writeHead(200).end();
      });
      return;
    }
    if (req.url === "/slow") {
      setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end("<html><body><h1>Slow</h1></body></html>"), 2500);
      return;
    }
    if (!PAGES.includes(req.url ?? "")) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<html><head><title>${req.url}</title></head><body><h1>Page ${req.url}</h1>${PAGES.map((p) => `<a href="${p}">${p}</a>`).join(" ")}</body></html>`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hooks };
}

/** The value of one sample of the Prometheus text (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const lines = text.split("\n").filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  const line = lines.find((l) => Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: { origin: string; server: Server; hooks: string[] };

  beforeAll(async () => {
    site = await startSite();
    trawl = await startTrawl({ mode, allowLocalWebhooks: true });
  });
  afterAll(async () => {
    await trawl?.stop();
    site?.server.close();
  });

  it("a crawl moves the counters by exactly the pages crawled", async () => {
    const metrics = async () => {
      const res = await fetch(`${trawl.api}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      return res.text();
    };
    const before = await metrics();
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/`, limit: 50, webhook: { url: `${site.origin}/hook` } });
    expect(res.status).toBe(200);
    const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
    expect(last.status).toBe("completed");
    expect(last.completed).toBe(PAGES.length);
    // crawl.started, one crawl.page per page, crawl.completed: received, then counted once each attempt has ended
    await expect.poll(() => site.hooks.length, { timeout: 30_000 }).toBe(PAGES.length + 2);
    await expect.poll(async () => sample(await metrics(), "trawl_webhook_attempts_total", { result: "ok" }) - sample(before, "trawl_webhook_attempts_total", { result: "ok" }), { timeout: 10_000 }).toBe(PAGES.length + 2);
    const status = (await getJson(`${trawl.api}/v2/crawl/${res.body.id}`)).body;
    const after = await metrics();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

    expect(moved("trawl_pages_fetched_total", { outcome: "ok" })).toBe(PAGES.length);
    expect(moved("trawl_pages_converted_total", { outcome: "ok" })).toBe(PAGES.length);
    expect(moved("trawl_pages_stored_total", { outcome: "stored" })).toBe(PAGES.length);
    expect(moved("trawl_fetch_duration_seconds_count", { outcome: "ok" })).toBe(PAGES.length);
    expect(moved("trawl_fetch_bytes_count")).toBe(PAGES.length);
    expect(moved("trawl_fetch_bytes_sum")).toBeGreaterThan(PAGES.length * 100);
    expect(moved("trawl_webhook_attempts_total", { result: "ok" })).toBe(PAGES.length + 2);
    expect(moved("trawl_webhook_attempts_total", { result: "retry" })).toBe(0);
    expect(moved("trawl_crawls_started_total")).toBe(1);
    expect(moved("trawl_crawls_ended_total", { status: "completed" })).toBe(1);
    expect(moved("trawl_credits_used_total")).toBe(status.creditsUsed);
    expect(status.creditsUsed).toBe(PAGES.length);
    // every stage's input topic, per partition, drained after the crawl
    for (const topic of ["frontier.inbox", "fetch.tasks", "pages.fetched", "crawl.pages"]) {
      const lines = after.split("\n").filter((l) => l.startsWith("trawl_consumer_lag{") && l.includes(`topic="${topic}"`));
      expect(lines.length, topic).toBe(4); // the harness's 4 partitions
    }
    expect(after).toMatch(/^process_cpu_user_seconds_total\{role="all"\} \d/m);
    expect(after).toMatch(/^nodejs_heap_size_used_bytes\{role="all"\} \d/m);
  });

  it("running crawls are a gauge: up while a crawl runs, down when it ended", async () => {
    const text = async () => (await fetch(`${trawl.api}/metrics`)).text();
    expect(sample(await text(), "trawl_crawls_running")).toBe(0);
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/slow`, limit: 1 });
    await expect.poll(async () => sample(await text(), "trawl_crawls_running"), { timeout: 10_000, interval: 100 }).toBe(1);
    expect((await waitForEnd(trawl.api, res.body.id)).at(-1).status).toBe("completed");
    expect(sample(await text(), "trawl_crawls_running")).toBe(0);
  });

  it("the render pool: size, pages in use, render time by outcome, and a browser restart after Chromium is killed", async () => {
    const text = async () => (await fetch(`${trawl.api}/metrics`)).text();
    const before = await text();
    for (let i = 0; i < 2; i++) {
      const page = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/a`, waitFor: 50 });
      expect(page.body.data.metadata.engine).toBe("chromium");
      if (i === 0) {
        // the browser (our child process) dies between the two pages: the second one starts a new one
        const out = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
        const pids = out.split("\n").map((l) => l.trim().split(/\s+/)).filter(([, c]) => /chrom/i.test(c ?? "")).map(([p]) => Number(p));
        expect(pids.length).toBeGreaterThan(0);
        for (const pid of pids) process.kill(pid, "SIGKILL");
        await new Promise((r) => setTimeout(r, 300));
      }
    }
    const after = await text();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    expect(sample(after, "trawl_render_pool_size")).toBe(trawl.config.renderConcurrency);
    expect(sample(after, "trawl_render_pages_in_use")).toBe(0);
    expect(moved("trawl_render_duration_seconds_count", { outcome: "ok" })).toBe(2);
    expect(moved("trawl_render_duration_seconds_sum", { outcome: "ok" })).toBeGreaterThan(0.05);
    expect(moved("trawl_browser_restarts_total")).toBe(1);
  });
});

describe("METRICS_PORT", () => {
  it("a role without the API serves /metrics, /health and /ready on it, and stops it on stop()", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "trawl-metrics-"));
    const metricsPort = 20000 + Math.floor(Math.random() * 20000);
    const config = loadConfig({}, { mode: "embedded", dataDir, metricsPort, logLevel: "error" });
    const running = await start(["sink"], config, createLogger("error", {}));
    try {
      const base = `http://127.0.0.1:${metricsPort}`;
      expect((await fetch(`${base}/health`)).status).toBe(200);
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).toContain("# TYPE trawl_pages_stored_total counter");
      expect(text).toMatch(/^trawl_consumer_lag\{topic="crawl\.pages",group="[^"]+",partition="0",role="sink"\} 0$/m);
      expect((await fetch(`${base}/nothing`)).status).toBe(404);
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
    await expect(fetch(`http://127.0.0.1:${metricsPort}/health`)).rejects.toThrow();
  });

  it("the render role alone serves the render pool's metrics on it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "trawl-metrics-"));
    const metricsPort = 20000 + Math.floor(Math.random() * 20000);
    const config = loadConfig({}, { mode: "embedded", dataDir, metricsPort, logLevel: "error", renderConcurrency: 3 });
    const running = await start(["render"], config, createLogger("error", {}));
    try {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/^trawl_render_pool_size\{role="render"\} 3$/m);
      expect(text).toMatch(/^trawl_render_pages_in_use\{role="render"\} 0$/m);
      expect(text).toContain("# TYPE trawl_render_duration_seconds histogram");
      expect(text).toMatch(/^trawl_browser_restarts_total\{role="render"\} 0$/m);
      expect(text).toMatch(/^trawl_consumer_lag\{topic="render\.tasks",group="[^"]+",partition="0",role="render"\} 0$/m);
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
