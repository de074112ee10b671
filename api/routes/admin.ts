// The queue admin UI: /admin/<BULL_AUTH_KEY>/queues (HTML) and /admin/<key>/queues.json: every stage's topic,
// messages produced and consumer lag, the dead letters of this process by code, and the running crawls. A wrong key gets a plain 404.
import { timingSafeEqual } from "node:crypto";
import Router from "@koa/router";
import type { ApiDeps } from "../deps.ts";
import { apiError } from "../errors.ts";
import { TEAM_BYPASS } from "../../pipeline/runtime/constants.ts";
import { deadLetterCounts } from "../../pipeline/runtime/dead-letters.ts";
import type { ReasonCounts } from "../../pipeline/store/url-reason.ts";

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The admin key check, in constant time. */
export function adminKeyMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function adminRoutes(deps: ApiDeps): Router {
  const router = new Router();
  const notFound = () => apiError(404, "Not found");

  async function snapshot() {
    const queues = deps.queueStats ? await deps.queueStats() : [];
    const teams = [TEAM_BYPASS, ...(deps.authStore ? (await deps.authStore.listTeams()).map((t) => t.teamId) : [])];
    const crawls = (await Promise.all(teams.map((t) => deps.store.activeCrawls(t)))).flat();
    return {
      queues,
      // this process's dead letters by topic and code (each role's process counts its own: /metrics, trawl_dead_letters_total)
      deadLetters: deadLetterCounts(),
      crawls: crawls.map((c) => ({ id: c.crawlId, url: c.url, total: c.total, completed: c.completed, failed: c.failed, createdAt: new Date(c.createdAt).toISOString(), reasons: c.reasons ?? {} })),
    };
  }

  router.get("/admin/:key/queues.json", async (ctx) => {
    if (!adminKeyMatches(String(ctx.params.key), deps.config.adminKey)) throw notFound();
    ctx.body = await snapshot();
  });

  router.get("/admin/:key/queues", async (ctx) => {
    if (!adminKeyMatches(String(ctx.params.key), deps.config.adminKey)) throw notFound();
    const s = await snapshot();
    const queueRows = s.queues.map((q) => `<tr><td>${esc(q.topic)}</td><td>${esc(q.group)}</td><td>${q.produced}</td><td>${q.lag}</td></tr>`).join("");
    const deadRows = s.deadLetters.map((d) => `<tr><td>${esc(d.topic)}</td><td>${esc(d.code)}</td><td>${d.count}</td></tr>`).join("");
    const why = (r: ReasonCounts) => Object.entries(r).map(([k, n]) => `${esc(k)} ${n}`).join(", ");
    const crawlRows = s.crawls.map((c) => `<tr><td>${esc(c.id)}</td><td>${esc(c.url)}</td><td>${c.completed}/${c.total}</td><td>${c.failed}</td><td>${why(c.reasons)}</td><td>${esc(c.createdAt)}</td></tr>`).join("");
    ctx.type = "text/html";
    ctx.body = `<!doctype html><html><head><meta charset="utf-8"><title>Trawl queues</title><meta http-equiv="refresh" content="5">
<style>body{font:14px system-ui;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}</style></head>
<body><h1>Trawl queues</h1><table><tr><th>topic</th><th>consumer</th><th>produced</th><th>lag</th></tr>${queueRows}</table>
<h2>Dead letters (this process)</h2><table><tr><th>topic</th><th>code</th><th>messages</th></tr>${deadRows || '<tr><td colspan="3">none</td></tr>'}</table>
<h2>Running crawls</h2><table><tr><th>id</th><th>url</th><th>done/total</th><th>failed</th><th>URLs by reason</th><th>created</th></tr>${crawlRows || '<tr><td colspan="6">none</td></tr>'}</table></body></html>`;
  });

  return router;
}
