// The /v2/monitor routes on a real HTTP server over the embedded monitor store: validation (schedule, minimum
// interval, targets, notifications), the per-team limit, Firecrawl's answer shape, pause and delete. Running checks
// is covered by test/integration/monitor.test.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { EmbeddedMonitorStore } from "../../pipeline/store/monitor-store.ts";
import { createApp } from "../app.ts";

let server: Server;
let base = "";
let dir = "";
let monitors: EmbeddedMonitorStore;
const NOW = Date.parse("2026-11-26T10:00:00Z");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trawl-monitor-routes-"));
  monitors = await EmbeddedMonitorStore.open(dir);
  const app = createApp({
    config: loadConfig({ MONITOR_MAX_PER_TEAM: "2", ALLOW_PRIVATE_CRAWL_TARGETS: "false" }), log: createLogger("silent"), clock: { now: () => NOW }, ready: async () => true, monitors,
    // a monitor with no check reads nothing else
    store: {} as never, bus: {} as never, fetcher: {} as never, convert: {} as never, robots: {} as never, searchBackend: {} as never,
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await monitors.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, { method, headers: { "content-type": "application/json" }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return { status: res.status, body: await res.json() as any };
};
const crawlTarget = [{ type: "crawl", url: "https://example.com/docs", crawlOptions: { limit: 10 } }];

describe("/v2/monitor", () => {
  it("creates a monitor in Firecrawl's shape, its text schedule answered as cron, next run computed", async () => {
    const res = await call("POST", "/v2/monitor", { name: "docs", schedule: { text: "every 15 minutes starting at :07" }, targets: crawlTarget, goal: "API changes", origin: "js-sdk@4.42.0" });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      success: true,
      data: {
        name: "docs", status: "active", schedule: { text: "every 15 minutes starting at :07", cron: "7-59/15 * * * *", timezone: "UTC" },
        nextRunAt: "2026-11-26T10:07:00.000Z", lastRunAt: null, currentCheckId: null, lastCheckSummary: null, goal: "API changes", judgeEnabled: false, targets: crawlTarget,
      },
    });
    expect((await call("GET", `/v2/monitor/${res.body.data.id}`)).body.data.id).toBe(res.body.data.id);
    expect((await call("GET", `/v2/monitor/${res.body.data.id}/checks`)).body).toEqual({ success: true, data: [] });
  });

  it("refuses bad schedules, targets and notifications with a 400 that says why", async () => {
    const bad = async (body: Record<string, unknown>, why: RegExp) => {
      const res = await call("POST", "/v2/monitor", { name: "x", schedule: { cron: "0 * * * *" }, targets: crawlTarget, ...body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(res.body), JSON.stringify(body)).toMatch(why);
    };
    await bad({ schedule: { cron: "61 * * * *" } }, /Invalid cron expression/);
    await bad({ schedule: { cron: "* * * * *" } }, /minimum interval is 300 s/);
    await bad({ schedule: { intervalSeconds: 60 } }, /minimum interval/);
    await bad({ schedule: { cron: "0 * * * *", intervalSeconds: 3600 } }, /exactly one of cron, text and intervalSeconds/);
    await bad({ schedule: { text: "now and then" } }, /Unsupported schedule text/);
    await bad({ schedule: { cron: "0 * * * *", timezone: "Nowhere/City" } }, /Unknown timezone/);
    await bad({ targets: [{ type: "search", queries: ["x"] }] }, /BAD_REQUEST/);
    await bad({ targets: [...crawlTarget, ...crawlTarget] }, /BAD_REQUEST/);
    await bad({ targets: [{ type: "crawl", urls: ["https://example.com/"] }] }, /a crawl target takes url/);
    await bad({ targets: [{ type: "crawl", url: "https://example.com/", crawlOptions: { limit: "many" } }] }, /limit/);
    await bad({ targets: [{ type: "scrape", urls: ["http://127.0.0.1/"] }] }, /private|loopback|local/i);
    for (const formats of [7, "markdown", [null], [{ type: "changeTracking", tag: 5 }]]) {
      await bad({ targets: [{ type: "crawl", url: "https://example.com/", scrapeOptions: { formats } }] }, /BAD_REQUEST/);
    }
    await bad({ notification: { email: { enabled: true, recipients: ["a@b.c"] } } }, /email notifications are not sent/);
    await bad({ webhook: { url: "http://127.0.0.1:9/hook" } }, /ALLOW_LOCAL_WEBHOOKS/);
  });

  it("refuses a cron that never runs (31 February) at create and update: a 400 naming schedule.cron", async () => {
    const res = await call("POST", "/v2/monitor", { name: "never", schedule: { cron: "0 0 31 2 *" }, targets: crawlTarget });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST", details: [{ path: ["schedule", "cron"] }] });
    expect(res.body.error).toMatch(/schedule\.cron: "0 0 31 2 \*" never runs in the next 10 years/);
    const leap = await call("POST", "/v2/monitor", { name: "leap", schedule: { cron: "0 0 29 2 *", timezone: "Europe/Berlin" }, targets: crawlTarget });
    expect(leap.status, JSON.stringify(leap.body)).toBe(200);
    expect(leap.body.data.nextRunAt).toBe("2028-02-28T23:00:00.000Z");
    const patched = await call("PATCH", `/v2/monitor/${leap.body.data.id}`, { schedule: { cron: "0 0 30 2 *" } });
    expect(patched.status).toBe(400);
    expect(patched.body.details).toMatchObject([{ path: ["schedule", "cron"] }]);
    expect((await call("DELETE", `/v2/monitor/${leap.body.data.id}`)).status).toBe(200);
  });

  it("pauses (no next run), resumes, deletes; a team has at most MONITOR_MAX_PER_TEAM monitors", async () => {
    const second = await call("POST", "/v2/monitor", { name: "prices", schedule: { intervalSeconds: 3600 }, targets: [{ type: "scrape", urls: ["https://example.com/price"] }] });
    expect(second.status).toBe(200);
    expect(second.body.data.nextRunAt).toBe("2026-11-26T11:00:00.000Z");
    const third = await call("POST", "/v2/monitor", { name: "more", schedule: { intervalSeconds: 3600 }, targets: crawlTarget });
    expect(third.status).toBe(403);
    expect(third.body.error).toMatch(/MONITOR_MAX_PER_TEAM/);
    const id = second.body.data.id;
    expect((await call("PATCH", `/v2/monitor/${id}`, { status: "paused" })).body.data).toMatchObject({ status: "paused", nextRunAt: null });
    expect((await call("PATCH", `/v2/monitor/${id}`, {})).status).toBe(400);
    expect((await call("PATCH", `/v2/monitor/${id}`, { status: "active", name: "prices 2" })).body.data).toMatchObject({ status: "active", name: "prices 2", nextRunAt: "2026-11-26T11:00:00.000Z" });
    expect((await call("GET", "/v2/monitor")).body.data.map((m: any) => m.name).sort()).toEqual(["docs", "prices 2"]);
    expect((await call("DELETE", `/v2/monitor/${id}`)).body).toEqual({ success: true });
    expect((await call("GET", `/v2/monitor/${id}`)).status).toBe(404);
    expect((await call("DELETE", `/v2/monitor/${id}`)).status).toBe(404);
    expect((await call("GET", "/v2/monitor/not-a-uuid")).status).toBe(400);
    expect((await call("POST", "/v2/monitor", { name: "again", schedule: { intervalSeconds: 3600 }, targets: crawlTarget })).status).toBe(200);
  });
});
