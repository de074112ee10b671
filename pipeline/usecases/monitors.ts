// Monitors (Firecrawl's /v2/monitor): a schedule that re-runs a crawl or a batch scrape with change tracking. This
// module checks a definition, turns it into the job a check runs, and runs a check: the job gets the check's id (a
// scheduled check's id is derived from the monitor and its tick, so every replica that fires the tick starts the
// same job, and the frontier ignores a CrawlRequested it already has) and the check row is written once it exists.
import { createHash } from "node:crypto";
import type { BatchScrapeRequest, CrawlOptions, CrawlRequest, MonitorRequest } from "../../schemas/index.ts";
import { validator } from "../../schemas/index.ts";
import { invalidField, RequestError } from "../runtime/errors.ts";
import type { CheckRow, MonitorRecord, MonitorStore } from "../store/monitor-store.ts";
import { checkStartUrl, checkWebhook } from "../url/start-url.ts";
import { checkRuns, planOf, shortestGap } from "./monitor-schedule.ts";
import { batchOptions, checkPageLimit, crawlOptions } from "./request-options.ts";
import { submitBatch } from "./submit-batch.ts";
import { ensureCrawl, type CrawlDeps } from "./submit-crawl.ts";
import { CreditsError } from "./team-access.ts";

export type MonitorDefinition = Omit<MonitorRequest, "name">;
type Target = MonitorRequest["targets"][number];

export interface MonitorSettings {
  allowPrivateCrawlTargets: boolean;
  allowLocalWebhooks: boolean;
  defaultCrawlLimit: number;
  /** CRAWL_MAX_PAGES (absent: no bound) */
  crawlMaxPages?: number;
  monitorMinIntervalMs: number;
  monitorMaxPerTeam: number;
}

export interface MonitorDeps extends CrawlDeps {
  monitors: MonitorStore;
  config: MonitorSettings;
  /**
   * With authentication on: the team's credits (TeamAccess.admit; throws CreditsError when none are left); `budget`:
   * the job's options, given the credits left as its budget (maxCredits), and its crawl id.
   */
  admit?: (teamId: string, required: number, limit?: number, budget?: { options: CrawlOptions; crawlId: string }) => Promise<number | undefined>;
}

/** The history a monitor compares with: the changeTracking tag the user gave, else one of its own. */
export function monitorTag(m: { monitorId: string; def: MonitorDefinition }): string {
  const formats = (m.def.targets[0]?.scrapeOptions as { formats?: unknown } | undefined)?.formats;
  const ct = (Array.isArray(formats) ? formats : []).find((f) => typeof f === "object" && f !== null && (f as { type?: string }).type === "changeTracking") as { tag?: unknown } | undefined;
  return typeof ct?.tag === "string" ? ct.tag : `monitor:${m.monitorId}`;
}

/** The scrape options of a check: the target's, with markdown and the changeTracking format (under the monitor's tag). */
function checkScrapeOptions(monitorId: string, def: MonitorDefinition): Record<string, unknown> {
  const so = { ...((def.targets[0]?.scrapeOptions as Record<string, unknown> | undefined) ?? {}) };
  // formats that are not a list are left for the request's schema to refuse
  if (so.formats !== undefined && !Array.isArray(so.formats)) return so;
  const formats = [...((so.formats as unknown[] | undefined) ?? ["markdown"])];
  const type = (f: unknown) => (typeof f === "string" ? f : typeof f === "object" && f !== null ? (f as { type?: unknown }).type : undefined);
  if (!formats.some((f) => type(f) === "markdown")) formats.push("markdown");
  // a monitor diffs its pages (Firecrawl: markdown-only monitors report the unified diff)
  if (!formats.some((f) => type(f) === "changeTracking")) formats.push({ type: "changeTracking", modes: ["git-diff"], tag: monitorTag({ monitorId, def }) });
  return { ...so, formats };
}

/** The request body of the job a check runs (checked against crawl-request or batch-scrape-request). */
export function jobRequest(monitorId: string, def: MonitorDefinition): { schema: "crawl-request"; body: CrawlRequest } | { schema: "batch-scrape-request"; body: BatchScrapeRequest } {
  const t = def.targets[0] as Target;
  const scrapeOptions = checkScrapeOptions(monitorId, def);
  if (t.type === "crawl") {
    if (!t.url || t.urls) throw invalidField(["targets", 0, "url"], "a crawl target takes url (and no urls)");
    return { schema: "crawl-request", body: { ...(t.crawlOptions ?? {}), url: t.url, scrapeOptions } as CrawlRequest };
  }
  if (!t.urls || t.url || t.crawlOptions) throw invalidField(["targets", 0, "urls"], "a scrape target takes urls (and no url or crawlOptions)");
  return { schema: "batch-scrape-request", body: { ...scrapeOptions, urls: t.urls } as BatchScrapeRequest };
}

export type MonitorJob = { kind: "crawl"; url: string; options: CrawlOptions } | { kind: "batch"; urls: string[]; options: CrawlOptions };

/** The job a check runs, with the options a crawl or batch request would get (a RequestError when they are invalid). */
export function jobOf(monitorId: string, def: MonitorDefinition, cfg: MonitorSettings): MonitorJob {
  const req = jobRequest(monitorId, def);
  const validate = validator(req.schema);
  if (!validate(req.body)) throw new RequestError(`Invalid target: ${validate.errors?.[0]?.instancePath ?? ""} ${validate.errors?.[0]?.message ?? ""}`.trim(), []);
  if (req.schema === "crawl-request") {
    const body = req.body as CrawlRequest;
    return { kind: "crawl", url: checkStartUrl(body.url, cfg.allowPrivateCrawlTargets), options: crawlOptions(body, cfg.defaultCrawlLimit, cfg.crawlMaxPages) };
  }
  const { urls, ...page } = req.body as BatchScrapeRequest;
  const valid = urls.map((u) => checkStartUrl(u, cfg.allowPrivateCrawlTargets));
  checkPageLimit(valid.length, cfg.crawlMaxPages ?? Infinity, ["targets", 0, "urls"], (n) => `a batch of ${n} URLs`);
  return { kind: "batch", urls: valid, options: batchOptions(page, valid.length, undefined) };
}

/** A definition's own rules (the schema checked its shape): schedule, minimum interval, webhook, notifications, target. */
export function checkDefinition(monitorId: string, def: MonitorDefinition, cfg: MonitorSettings, now: number): void {
  const plan = planOf(def.schedule);
  checkRuns(def.schedule, plan, now);
  const gap = shortestGap(plan, now);
  if (gap < cfg.monitorMinIntervalMs) {
    throw invalidField(["schedule"], `runs ${Math.round(gap / 1000)} s apart; the minimum interval is ${Math.round(cfg.monitorMinIntervalMs / 1000)} s (MONITOR_MIN_INTERVAL_MS)`);
  }
  if (def.notification?.email?.enabled) throw invalidField(["notification", "email", "enabled"], "email notifications are not sent by this server; use webhook");
  checkWebhook(def.webhook, cfg.allowLocalWebhooks);
  if (def.webhook && !URL.canParse(def.webhook.url)) throw invalidField(["webhook", "url"], "Invalid webhook URL");
  jobOf(monitorId, def, cfg);
}

/** The webhook a check's job stores: its events become monitor events (webhook-emit/monitor-payload.ts). */
export function checkWebhookSetting(monitorId: string, def: MonitorDefinition): string {
  const w = def.webhook;
  return w ? JSON.stringify({ url: w.url, headers: w.headers ?? {}, metadata: w.metadata ?? {}, ...(w.events ? { events: w.events } : {}), monitor: monitorId }) : "";
}

/** A scheduled check's id (a UUID): the same for every replica that fires this tick of this monitor. */
export function scheduledCheckId(monitorId: string, tick: number): string {
  const h = createHash("sha256").update(`${monitorId}\n${tick}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.slice(16, 17), 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export const definitionOf = (m: MonitorRecord): MonitorDefinition => JSON.parse(m.body) as MonitorDefinition;

/** The monitor's check still running (its job is `scraping`), if any. */
export async function runningCheck(deps: MonitorDeps, monitorId: string, except = ""): Promise<string | null> {
  const prev = (await deps.monitors.listChecks(monitorId)).find((c) => c.checkId !== except && c.outcome === "started");
  return prev && (await deps.store.getCrawl(prev.checkId))?.status === "scraping" ? prev.checkId : null;
}

/**
 * Runs one check of a monitor under `checkId`: the job first (submitted when it has no record; a batch's seeds
 * under a prefix derived from the id, so a second submit adds nothing), then the check row. A crash between the two
 * leaves the job without its row: the tick is still due, and the next poll finds the job and writes the row. A
 * scheduled tick that comes while the previous check still runs starts nothing (Firecrawl's skipped_overlap): two
 * crawls of one history at once would compare each page with the other's snapshot.
 */
export async function runCheck(deps: MonitorDeps, m: MonitorRecord, checkId: string, trigger: CheckRow["trigger"], tick: number): Promise<CheckRow["outcome"]> {
  const row = { monitorId: m.monitorId, checkId, teamId: m.teamId, trigger, scheduledFor: tick };
  const existing = await deps.store.getCrawl(checkId);
  if (!existing && trigger === "scheduled" && (await runningCheck(deps, m.monitorId, checkId))) {
    await deps.monitors.saveCheck({ ...row, createdAt: deps.clock.now(), outcome: "skipped_overlap" });
    deps.log.info({ monitorId: m.monitorId, checkId, tick: new Date(tick).toISOString() }, "monitor tick skipped: the previous check is still running");
    return "skipped_overlap";
  }
  const def = definitionOf(m);
  const job = jobOf(m.monitorId, def, deps.config);
  const webhook = checkWebhookSetting(m.monitorId, def);
  // credits, as POST /v2/crawl and /v2/batch/scrape check them (a crawl's limit lowered to the credits left)
  if (!existing && deps.admit) {
    try {
      if (job.kind === "crawl") job.options.limit = (await deps.admit(m.teamId, job.options.limit, job.options.limit, { options: job.options, crawlId: checkId })) ?? job.options.limit;
      else await deps.admit(m.teamId, job.urls.length, undefined, { options: job.options, crawlId: checkId });
    } catch (err) {
      if (!(err instanceof CreditsError) || trigger === "manual") throw err;
      await deps.monitors.saveCheck({ ...row, createdAt: deps.clock.now(), outcome: "no_credits" });
      deps.log.warn({ monitorId: m.monitorId, checkId, teamId: m.teamId }, "monitor tick not run: the team has no credits left");
      return "no_credits";
    }
  }
  if (job.kind === "crawl") await ensureCrawl(deps, { id: checkId, url: job.url, options: job.options, teamId: m.teamId, webhook });
  else if (!existing) await submitBatch(deps, { id: checkId, keyPrefix: checkId.slice(0, 12), urls: job.urls, options: job.options, teamId: m.teamId, webhook });
  await deps.monitors.saveCheck({ ...row, createdAt: deps.clock.now(), outcome: "started" });
  deps.log.info({ monitorId: m.monitorId, checkId, trigger, tick: new Date(tick).toISOString(), kind: job.kind, resumed: existing !== null }, "monitor check started");
  return "started";
}
