// What GET /v2/monitor and its checks answer (Firecrawl's Monitor and MonitorCheck shapes), read from the monitor
// record, its check rows, the check's job (status, credits) and the page history (counts by change status).
import type { CrawlRecord, CrawlStore } from "../store/crawl-store.ts";
import type { CheckRow, MonitorRecord } from "../store/monitor-store.ts";
import type { SnapshotStore } from "../store/snapshot-store.ts";
import { TEAM_BYPASS } from "../runtime/constants.ts";
import { nextTick, planOf } from "./monitor-schedule.ts";
import type { MonitorTicks } from "./monitor-ticks.ts";
import { definitionOf } from "./monitors.ts";

export interface ViewDeps {
  store: CrawlStore;
  snapshots?: SnapshotStore;
  /** the next ticks, remembered per monitor (a listing of 25 monitors does not search 25 schedules each time) */
  ticks?: MonitorTicks;
}

const isoOrNull = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : null);

export interface CheckView {
  id: string;
  monitorId: string;
  status: "queued" | "running" | "completed" | "failed" | "partial" | "skipped_overlap";
  trigger: CheckRow["trigger"];
  scheduledFor: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  actualCredits: number | null;
  summary: { totalPages: number; same: number; changed: number; new: number; removed: number; error: number };
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

function checkStatus(row: CheckRow, job: CrawlRecord | null): CheckView["status"] {
  if (row.outcome === "no_credits") return "failed";
  if (!job) return row.outcome === "skipped_overlap" ? "skipped_overlap" : "queued";
  if (job.status === "scraping") return "running";
  if (job.status === "completed") return job.failed > 0 ? "partial" : "completed";
  return "failed";
}

export async function checkView(deps: ViewDeps, row: CheckRow): Promise<CheckView & { job: CrawlRecord | null }> {
  const job = row.outcome === "started" ? await deps.store.getCrawl(row.checkId) : null;
  const tag = job?.options.changeTracking?.tag;
  const counts = job && tag !== undefined && deps.snapshots ? await deps.snapshots.changeCounts(job.teamId || TEAM_BYPASS, tag, row.checkId) : { new: 0, same: 0, changed: 0, removed: 0 };
  const failed = job?.failed ?? 0;
  return {
    id: row.checkId, monitorId: row.monitorId, status: checkStatus(row, job), trigger: row.trigger, scheduledFor: isoOrNull(row.scheduledFor),
    startedAt: job ? isoOrNull(job.createdAt) : null, finishedAt: job ? isoOrNull(job.completedAt) : null, actualCredits: job ? job.creditsUsed : null,
    summary: { totalPages: counts.new + counts.same + counts.changed + counts.removed + failed, ...counts, error: failed },
    error: row.outcome === "no_credits" ? "not run: the team has no credits left" : job?.error || null, createdAt: new Date(row.createdAt).toISOString(), updatedAt: new Date(job?.updatedAt ?? row.createdAt).toISOString(), job,
  };
}

/** The monitor as the API shows it; `checks` newest first. */
export async function monitorView(deps: ViewDeps, m: MonitorRecord, checks: CheckRow[], now: number): Promise<Record<string, unknown>> {
  const def = definitionOf(m);
  const lastScheduled = checks.filter((c) => c.trigger === "scheduled").reduce((t, c) => Math.max(t, c.scheduledFor), 0);
  const after = Math.max(now, lastScheduled);
  const next = m.status !== "active" ? null : deps.ticks ? deps.ticks.next(m, after) : nextTick(planOf(def.schedule), m.anchor, after);
  const latest = checks.find((c) => c.outcome === "started");
  const last = latest ? await checkView(deps, latest) : null;
  return {
    id: m.monitorId, name: m.name, status: m.status,
    schedule: { ...def.schedule, timezone: def.schedule.timezone ?? "UTC", ...(def.schedule.text && !def.schedule.cron ? { cron: planCron(def.schedule) } : {}) },
    nextRunAt: isoOrNull(next), lastRunAt: isoOrNull(latest?.createdAt), currentCheckId: last?.status === "running" ? last.id : null,
    targets: def.targets, ...(def.webhook ? { webhook: def.webhook } : {}), notification: def.notification ?? {}, retentionDays: def.retentionDays ?? 30,
    estimatedCreditsPerMonth: null, lastCheckSummary: last && last.status !== "running" ? last.summary : null, goal: def.goal ?? null, judgeEnabled: false,
    createdAt: new Date(m.createdAt).toISOString(), updatedAt: new Date(m.updatedAt).toISOString(),
  };
}

function planCron(s: Parameters<typeof planOf>[0]): string | undefined {
  const plan = planOf(s);
  return plan.kind === "cron" ? plan.expr : undefined;
}
