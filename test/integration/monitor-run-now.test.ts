// "Run now" is claimed atomically (issue 50, finding 7), authentication on, in both modes: ten concurrent POST
// /v2/monitor/:id/run start one check (one crawl: the site's home page fetched once, the team billed once) and answer
// 409 nine times. Cluster mode sends them to two API processes on one Kafka and one ClickHouse (half each), so the
// claim is decided in the store, not in one process's memory.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startChangingSite, type ChangingSite } from "../fixtures/changing-site.ts";
import { systemClock } from "../../pipeline/runtime/clock.ts";
import { MODES, startTrawl, type Instance } from "./harness.ts";

describe.each(MODES)("monitor run now with authentication on (%s)", (mode) => {
  let replicas: Instance[] = [];
  let site: ChangingSite;

  beforeAll(async () => {
    // an hourly monitor: no scheduled tick comes during the test
    const settings = { mode, useDbAuthentication: true, monitorMinIntervalMs: 1000 };
    const first = await startTrawl(settings);
    replicas = [first];
    if (mode === "cluster") {
      const { topicPrefix, groupPrefix, clickhouseDatabase } = first.config;
      replicas.push(await startTrawl({ ...settings, topicPrefix, groupPrefix, clickhouseDatabase }, systemClock, ["api"]));
    }
    site = await startChangingSite();
  });

  afterAll(async () => {
    // the extra API process first: the first one's stop drops the database
    for (const r of replicas.slice(1)) {
      await r.running.stop();
      rmSync(r.config.dataDir, { recursive: true, force: true });
    }
    await replicas[0]?.stop();
    await site?.close();
  });

  async function call(api: string, method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${api}${path}`, { method, headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: res.status, body: await res.json() };
  }

  it("ten concurrent runs start one check, billed once; nine answer 409", async () => {
    const api = (replicas[0] as Instance).api;
    const keyRes = await fetch(`${api}/admin/CHANGEME/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ team: `run-now-${mode}`, credits: 1000 }) });
    const key = ((await keyRes.json()) as { key: string }).key;
    const created = await call(api, "POST", "/v2/monitor", key, { name: "run now", schedule: { intervalSeconds: 3600 }, targets: [{ type: "crawl", url: site.origin, crawlOptions: { limit: 20, sitemap: "skip" } }] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.data.id as string;

    const runs = await Promise.all(Array.from({ length: 10 }, (_, i) => call((replicas[i % replicas.length] as Instance).api, "POST", `/v2/monitor/${id}/run`, key)));
    const statuses = runs.map((r) => r.status).sort();
    expect(statuses, JSON.stringify(runs.map((r) => r.body))).toEqual([200, ...Array(9).fill(409)]);
    const checkId = runs.find((r) => r.status === 200)?.body.id;
    for (const r of runs.filter((x) => x.status === 409)) expect(r.body).toMatchObject({ success: false, error: "A monitor check is already running" });

    let checks: any[] = [];
    for (let i = 0; i < 600; i++) {
      checks = (await call(api, "GET", `/v2/monitor/${id}/checks`, key)).body.data;
      if (checks.length > 0 && checks.every((c) => c.status !== "running" && c.status !== "queued")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(checks.map((c) => [c.id, c.trigger, c.status])).toEqual([[checkId, "manual", "completed"]]);
    expect(checks[0].summary).toMatchObject({ totalPages: 5, new: 5 });
    expect(site.hits.get("/ 200")).toBe(1);
    // billed once: the team's usage is the one check's credits
    const usage = (await call(api, "GET", "/v2/team/credit-usage", key)).body.data;
    expect(checks[0].actualCredits).toBe(5);
    expect(usage.creditsUsed).toBe(5);
  }, 60_000);
});
