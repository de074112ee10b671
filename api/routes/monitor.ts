// /v2/monitor routes (Firecrawl's shape): create, list, get, update (PATCH, `status` pauses and resumes), delete,
// run now, and the checks. Each parses, calls the monitors use case, and shapes the answer.
import Router from "@koa/router";
import type { Context } from "koa";
import { randomUUID } from "node:crypto";
import type { MonitorRequest, MonitorUpdate } from "../../schemas/index.ts";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { checkWebhookUrl } from "../webhook-url.ts";
import { validateBody } from "../validate.ts";
import { jobId, pagination } from "./crawl.ts";
import type { MonitorRecord, MonitorStore } from "../../pipeline/store/monitor-store.ts";
import { checkDefinition, definitionOf, jobRequest, type MonitorDefinition, type MonitorDeps } from "../../pipeline/usecases/monitors.ts";
import { runNow, withoutNewChecks } from "../../pipeline/usecases/monitor-claim.ts";
import { MonitorTicks } from "../../pipeline/usecases/monitor-ticks.ts";
import { checkView, monitorView } from "../../pipeline/usecases/monitor-views.ts";
import { removedDocuments } from "../../pipeline/usecases/crawl-status.ts";

const notFound = () => apiError(404, "Monitor not found");
const CHECK_PAGES_BYTES = 10 * 1024 * 1024;

export function monitorRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const store = (): MonitorStore => {
    if (!deps.monitors) throw apiError(503, "Monitors are not available in this process");
    return deps.monitors;
  };
  const access = deps.access;
  const mdeps = (): MonitorDeps => ({ ...deps, monitors: store(), ...(access ? { admit: (...args: Parameters<NonNullable<MonitorDeps["admit"]>>) => access.admit(...args) } : {}) });
  const now = () => deps.clock.now();

  /** Every rule of a definition: its job's request against the crawl or batch schema, the webhook URL, the schedule. */
  const check = (id: string, def: MonitorDefinition) => {
    const req = jobRequest(id, def);
    validateBody(req.schema, req.body);
    checkWebhookUrl(def.webhook ? { url: def.webhook.url } : undefined);
    checkDefinition(id, def, deps.config, now());
  };

  /** The caller's monitor (not deleted), or 404. */
  async function own(ctx: Context): Promise<MonitorRecord> {
    const m = await store().getMonitor(jobId(ctx));
    if (!m || m.status === "deleted" || m.teamId !== ctx.state.teamId) throw notFound();
    return m;
  }

  const ticks = new MonitorTicks();
  const view = async (m: MonitorRecord) => monitorView({ ...deps, ticks }, m, await store().listChecks(m.monitorId), now());

  router.post("/v2/monitor", async (ctx) => {
    const body = validateBody<MonitorRequest>("monitor-request", ctx.state.body);
    const { name, origin: _origin, integration: _integration, ...def } = body;
    const id = randomUUID();
    check(id, def);
    const teamId = ctx.state.teamId as string;
    if ((await store().listMonitors(teamId)).length >= deps.config.monitorMaxPerTeam) {
      throw apiError(403, `Monitor limit reached: a team may have ${deps.config.monitorMaxPerTeam} monitors (MONITOR_MAX_PER_TEAM); delete one first`);
    }
    const t = now();
    const m: MonitorRecord = { monitorId: id, teamId, version: t, name, status: "active", body: JSON.stringify(def), anchor: t, createdAt: t, updatedAt: t };
    await store().saveMonitor(m);
    deps.log.info({ monitorId: id, teamId }, "monitor created");
    ctx.body = { success: true, data: await view(m) };
  });

  router.get("/v2/monitor", async (ctx) => {
    const { skip, limit } = listWindow(ctx.query);
    const all = await store().listMonitors(ctx.state.teamId);
    ctx.body = { success: true, data: await Promise.all(all.slice(skip, skip + limit).map(view)) };
  });

  router.get("/v2/monitor/:id", async (ctx) => {
    ctx.body = { success: true, data: await view(await own(ctx)) };
  });

  router.patch("/v2/monitor/:id", async (ctx) => {
    const m = await own(ctx);
    const { status, name, origin: _origin, integration: _integration, ...changes } = validateBody<MonitorUpdate>("monitor-update", ctx.state.body);
    const before = definitionOf(m);
    const def: MonitorDefinition = { ...before, ...changes };
    check(m.monitorId, def);
    const t = now();
    const next = status ?? (m.status as "active" | "paused");
    // ticks count from a resume or a new schedule: the ticks of a pause are not run when it ends
    const rescheduled = (next === "active" && m.status !== "active") || JSON.stringify(def.schedule) !== JSON.stringify(before.schedule);
    const updated: MonitorRecord = { ...m, name: name ?? m.name, status: next, body: JSON.stringify(def), version: Math.max(t, m.version + 1), updatedAt: t, anchor: rescheduled ? t : m.anchor };
    // a pause waits for a tick being started, and no tick starts once it is written
    if (m.status === "active" && next !== "active") await withoutNewChecks(mdeps(), m, () => store().saveMonitor(updated));
    else await store().saveMonitor(updated);
    deps.log.info({ monitorId: m.monitorId, status: next, rescheduled }, "monitor updated");
    ctx.body = { success: true, data: await view(updated) };
  });

  router.delete("/v2/monitor/:id", async (ctx) => {
    const m = await own(ctx);
    const t = now();
    await withoutNewChecks(mdeps(), m, () => store().saveMonitor({ ...m, status: "deleted", version: Math.max(t, m.version + 1), updatedAt: t }));
    deps.log.info({ monitorId: m.monitorId }, "monitor deleted");
    ctx.body = { success: true };
  });

  router.post("/v2/monitor/:id/run", async (ctx) => {
    const m = await own(ctx);
    // a claim: of concurrent runs (any API process, with or without authentication) one starts a check
    const started = await runNow(mdeps(), m);
    if (started.checkId === null) throw apiError(409, "A monitor check is already running");
    const checkId = started.checkId;
    const row = (await store().listChecks(m.monitorId)).find((c) => c.checkId === checkId);
    const { job: _job, ...data } = await checkView(deps, row ?? { monitorId: m.monitorId, checkId, teamId: m.teamId, trigger: "manual", scheduledFor: now(), createdAt: now(), outcome: "started" });
    ctx.body = { success: true, id: checkId, data };
  });

  router.get("/v2/monitor/:id/checks", async (ctx) => {
    const m = await own(ctx);
    const { skip, limit } = listWindow(ctx.query);
    const rows = (await store().listChecks(m.monitorId)).slice(skip, skip + limit);
    ctx.body = { success: true, data: await Promise.all(rows.map(async (r) => { const { job: _job, ...v } = await checkView(deps, r); return v; })) };
  });

  router.get("/v2/monitor/:id/checks/:checkId", async (ctx) => {
    const m = await own(ctx);
    const checkId = String(ctx.params.checkId);
    const row = (await store().listChecks(m.monitorId)).find((c) => c.checkId === checkId);
    if (!row) throw apiError(404, "Monitor check not found");
    const { job, ...data } = await checkView(deps, row);
    const { skip, limit } = pagination(ctx.query);
    const status = typeof ctx.query.status === "string" ? ctx.query.status : undefined;
    const page = job ? await deps.store.pageDocuments(checkId, skip, CHECK_PAGES_BYTES, limit ?? 100) : { docs: [], nextSkip: skip, more: false };
    const removed = job && !page.more && deps.snapshots ? await removedDocuments(deps.snapshots, job) : [];
    const pages = [...page.docs, ...removed].map((text) => checkPage(text, row.createdAt)).filter((p) => !status || p.status === status);
    const next = page.more ? `${ctx.origin}/v2/monitor/${m.monitorId}/checks/${checkId}?skip=${page.nextSkip}${limit ? `&limit=${limit}` : ""}` : null;
    ctx.body = { success: true, next, data: { ...data, pages, next } };
  });

  return router;
}

/** `offset`/`skip` and `limit` of a list (Firecrawl: limit 1-100, default 25). */
function listWindow(query: Record<string, string | string[] | undefined>): { skip: number; limit: number } {
  const num = (v: unknown, d: number, min: number, max: number, name: string) => {
    if (v === undefined) return d;
    if (typeof v !== "string" || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw apiError(400, `Invalid ${name}: an integer between ${min} and ${max}`);
    return Number(v);
  };
  return { skip: num(query.offset ?? query.skip, 0, 0, 1_000_000, "offset"), limit: num(query.limit, 25, 1, 100, "limit") };
}

/** One page of a check, from its stored document (Firecrawl's MonitorCheckPage). */
function checkPage(text: string, at: number): { status: string } & Record<string, unknown> {
  const doc = JSON.parse(text) as { metadata: { sourceURL?: string; url?: string; scrapeId?: string; statusCode?: number; error?: string }; changeTracking?: { changeStatus?: string; diff?: { text?: string; json?: unknown }; json?: unknown } };
  const ct = doc.changeTracking;
  const status = doc.metadata.error && !ct ? "error" : (ct?.changeStatus ?? "new");
  return {
    id: doc.metadata.scrapeId ?? null, url: doc.metadata.sourceURL ?? doc.metadata.url ?? "", status, previousScrapeId: null,
    currentScrapeId: status === "removed" ? null : (doc.metadata.scrapeId ?? null), statusCode: doc.metadata.statusCode ?? null, error: doc.metadata.error ?? null,
    metadata: null, judgment: null,
    diff: status === "changed" ? { ...(ct?.diff?.text !== undefined ? { text: ct.diff.text } : {}), ...(ct?.json ?? ct?.diff?.json ? { json: ct?.json ?? ct?.diff?.json } : {}) } : null,
    createdAt: new Date(at).toISOString(),
  };
}
