// A CPU hog on every core beside Trawl (child processes spinning), with the load guard's defaults (MAX_CPU not set):
// a crawl of 100 pages of a small local site still completes, in seconds, not at one page a second as when the guard
// was a stop/go gate (~100 s here); the hog stopped, the guard runs the stage's concurrency again. The guard's limit
// and reason are read from /metrics. Cluster part: the Kafka and ClickHouse the tests use, running on this machine,
// are found as Trawl's own servers (their CPU is not a neighbour's).
// This file loads both cores: it runs alone (vitest.config.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OwnServers, serverEndpoints } from "../../pipeline/fetch-render/own-servers.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { startManyPagesSite, type ManyPagesSite } from "../fixtures/many-pages-site.ts";
import { postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const SPIN = "for (;;);";

/** One spinning process per core; resolves once each one runs. */
async function startHog(): Promise<ChildProcess[]> {
  const hogs = Array.from({ length: cpus().length }, () => spawn(process.execPath, ["-e", `console.log("spinning"); ${SPIN}`], { stdio: ["ignore", "pipe", "ignore"] }));
  await Promise.all(hogs.map((h) => new Promise((r) => h.stdout!.once("data", r))));
  return hogs;
}

const gauge = (text: string, name: string, labels: string): number | undefined => {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
};

describe("embedded mode: a CPU hog on every core beside Trawl", () => {
  let trawl: Instance;
  let site: ManyPagesSite;
  let hogs: ChildProcess[] = [];
  beforeAll(async () => {
    // 1 home page + 9 sections + 90 pages
    site = await startManyPagesSite({ sections: 9, pagesPerSection: 10, delayMs: 0 });
    expect(site.paths).toHaveLength(100);
    // the defaults of the load guard: MAX_CPU not set (memory is not what this test is about)
    trawl = await startTrawl({ mode: "embedded", maxCpu: null, maxRam: 1, fetchConcurrency: 16 });
  });
  afterAll(async () => {
    for (const h of hogs) h.kill("SIGKILL");
    await trawl?.stop();
    await site?.close();
  });
  const metrics = async () => (await fetch(`${trawl.api}/metrics`)).text();
  const crawl100 = async (): Promise<{ completed: number; seconds: number }> => {
    const t0 = performance.now();
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/`, limit: 100, maxDiscoveryDepth: 5 });
    expect(res.status).toBe(200);
    // the bound: under 30 s (a page a second, as before, would take ~100 s)
    const last = (await waitForEnd(trawl.api, res.body.id, 30_000)).at(-1);
    expect(last.status).toBe("completed");
    return { completed: last.completed, seconds: (performance.now() - t0) / 1000 };
  };

  it("100 pages complete while the hog spins, and the limit is back to the stage's concurrency once it stops", async () => {
    hogs = await startHog();
    await new Promise((r) => setTimeout(r, 1500)); // the guard's samples see the hog
    const busy = await crawl100();
    expect(busy.completed).toBe(100);
    const during = await metrics();
    // never below the floor (LOAD_GUARD_MIN_CONCURRENCY, 2 by default) while the hog spins
    expect(gauge(during, "trawl_load_guard_limit", 'stage="fetch-render"')).toBeGreaterThanOrEqual(2);
    for (const h of hogs) h.kill("SIGKILL");
    hogs = [];
    // the hog gone: the stage's concurrency (16) and no reason within seconds (the limit doubles each second)
    await expect.poll(async () => {
      const text = await metrics();
      return [gauge(text, "trawl_load_guard_limit", 'stage="fetch-render"'), gauge(text, "trawl_load_guard_reason", 'reason="none"')];
    }, { timeout: 15_000, interval: 250 }).toEqual([16, 1]);
    const quiet = await crawl100();
    expect(quiet.completed).toBe(100);
    // a figure for the note, not an assertion (this machine is shared)
    const limit = gauge(during, "trawl_load_guard_limit", 'stage="fetch-render"');
    console.log(`load-guard-hog: 100 pages with a hog on ${cpus().length} cores: ${busy.seconds.toFixed(1)} s (fetch-render limit after it: ${limit}); hog stopped: ${quiet.seconds.toFixed(1)} s`);
  });
});

describe("cluster mode: Trawl's own servers on this machine", () => {
  it("the Kafka and ClickHouse of KAFKA_BROKERS and CLICKHOUSE_URL are found as Trawl's own", async () => {
    const config = loadConfig(process.env);
    const own = new OwnServers({ endpoints: serverEndpoints(config), chromiumPath: config.chromiumPath });
    own.processes();
    await own.scanning;
    const found = own.processes();
    const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
    const kafka = found.filter((p) => p.what === "KAFKA_BROKERS");
    const clickhouse = found.filter((p) => p.what === "CLICKHOUSE_URL");
    expect(kafka.length).toBeGreaterThanOrEqual(1);
    expect(clickhouse.length).toBeGreaterThanOrEqual(1);
    for (const p of kafka) expect(cmdline(p.pid)).toMatch(/kafka/i);
    for (const p of clickhouse) expect(cmdline(p.pid)).toMatch(/clickhouse/i);
    // and their CPU is counted from here on (the first call is the baseline)
    expect(own.cpuSecondsSince()).toBe(0);
  });
});
