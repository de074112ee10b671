// Monitors (scheduled recrawls) and their checks. A monitor is a versioned record (the latest version wins; deleting
// writes a version with status "deleted"); a check is one run of it, whose id is also the id of the crawl or batch it
// ran (a scheduled check's id is derived from the monitor and the tick, so replicas that fire the same tick write
// the same row and start the same job). Adapters: EmbeddedMonitorStore (monitors.jsonl) and ClickHouseMonitorStore.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { AppendLog, readLines } from "../runtime/append-log.ts";

export type MonitorStatus = "active" | "paused" | "deleted";

export interface MonitorRecord {
  monitorId: string;
  teamId: string;
  /** grows with each write (ms); the highest wins */
  version: number;
  name: string;
  status: MonitorStatus;
  /** the monitor's definition as the API keeps it (schedule, targets, webhook, ...), JSON */
  body: string;
  /** ticks come after it: the creation, the last resume, or the last change of schedule */
  anchor: number;
  createdAt: number;
  updatedAt: number;
}

export interface CheckRow {
  monitorId: string;
  checkId: string;
  teamId: string;
  trigger: "scheduled" | "manual";
  /** the tick it ran for (manual: when it was asked for) */
  scheduledFor: number;
  createdAt: number;
  /** skipped_overlap: the tick came while the previous check still ran; no_credits: the team had none left (nothing started) */
  outcome: "started" | "skipped_overlap" | "no_credits";
}

export interface MonitorStore {
  saveMonitor(r: MonitorRecord): Promise<void>;
  /** The latest version (a deleted monitor too: the caller decides). */
  getMonitor(monitorId: string): Promise<MonitorRecord | null>;
  /** The latest version of every monitor not deleted, of one team (null: of every team), newest first. */
  listMonitors(teamId: string | null): Promise<MonitorRecord[]>;
  /** Idempotent: the same check written twice is one check. */
  saveCheck(row: CheckRow): Promise<void>;
  /** A monitor's checks, newest tick first, each once. */
  listChecks(monitorId: string): Promise<CheckRow[]>;
  /** The latest scheduled tick run by each monitor (absent: none yet). */
  lastScheduled(monitorIds: string[]): Promise<Map<string, number>>;
  /**
   * Claims the check that follows `after` (the monitor's latest started check, "" before the first) for `checkId`,
   * atomically across callers and processes: of the callers claiming the same monitor and `after` at once, at most one
   * gets a claim id (run the check, then keep the claim: the started check's row moves `after` on), the others null
   * (another check holds it, or the claim could not be decided: try again later). A claim not released lapses after
   * CLAIM_LAPSE_MS (a caller that died before writing its check's row).
   */
  claimCheck(monitorId: string, after: string, checkId: string): Promise<string | null>;
  /** Gives a claim up (its check did not start): the next claim of the same `after` can win. */
  releaseCheck(monitorId: string, after: string, claimId: string): Promise<void>;
  close(): Promise<void>;
}

/** How long a claim holds when its check's row never comes (the claimer died in between). */
export const CLAIM_LAPSE_MS = 60_000;

type Line = { t: "monitor"; r: MonitorRecord } | { t: "check"; c: CheckRow };

/** Embedded mode: monitors.jsonl under DATA_DIR/store; everything in memory (monitors are few and small). */
export class EmbeddedMonitorStore implements MonitorStore {
  private readonly log: AppendLog;
  private readonly monitors = new Map<string, MonitorRecord>();
  private readonly checks = new Map<string, Map<string, CheckRow>>();
  /** claims by monitor and `after`: one process owns the embedded store, so a test-and-set in memory is atomic */
  private readonly claims = new Map<string, { claimId: string; at: number }>();
  private readonly now: () => number;

  private constructor(dir: string, now: () => number) {
    this.log = new AppendLog(join(dir, "store", "monitors.jsonl"));
    this.now = now;
  }

  static async open(dir: string, now: () => number = Date.now): Promise<EmbeddedMonitorStore> {
    const store = new EmbeddedMonitorStore(dir, now);
    for await (const { line } of readLines(store.log.path)) store.apply(JSON.parse(line) as Line);
    return store;
  }

  private apply(line: Line): void {
    if (line.t === "monitor") {
      const prev = this.monitors.get(line.r.monitorId);
      if (!prev || line.r.version >= prev.version) this.monitors.set(line.r.monitorId, line.r);
      return;
    }
    const of = this.checks.get(line.c.monitorId) ?? new Map<string, CheckRow>();
    // a check that started a job stays started, whichever replica wrote first
    const prev = of.get(line.c.checkId);
    if (!prev || (prev.outcome !== "started" && line.c.outcome === "started")) of.set(line.c.checkId, line.c);
    this.checks.set(line.c.monitorId, of);
  }

  private async write(line: Line): Promise<void> {
    await this.log.append([JSON.stringify(line)]).written;
    this.apply(line);
  }

  saveMonitor(r: MonitorRecord): Promise<void> {
    return this.write({ t: "monitor", r });
  }

  async getMonitor(monitorId: string): Promise<MonitorRecord | null> {
    return this.monitors.get(monitorId) ?? null;
  }

  async listMonitors(teamId: string | null): Promise<MonitorRecord[]> {
    return [...this.monitors.values()].filter((m) => m.status !== "deleted" && (teamId === null || m.teamId === teamId)).sort((a, b) => b.createdAt - a.createdAt);
  }

  async saveCheck(row: CheckRow): Promise<void> {
    if (this.checks.get(row.monitorId)?.get(row.checkId)?.outcome === row.outcome) return;
    await this.write({ t: "check", c: row });
  }

  async listChecks(monitorId: string): Promise<CheckRow[]> {
    return [...(this.checks.get(monitorId)?.values() ?? [])].sort((a, b) => b.scheduledFor - a.scheduledFor);
  }

  async lastScheduled(monitorIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of monitorIds) {
      for (const c of this.checks.get(id)?.values() ?? []) if (c.trigger === "scheduled" && c.scheduledFor > (out.get(id) ?? -1)) out.set(id, c.scheduledFor);
    }
    return out;
  }

  async claimCheck(monitorId: string, after: string, _checkId: string): Promise<string | null> {
    const now = this.now();
    for (const [k, c] of this.claims) if (now - c.at >= CLAIM_LAPSE_MS) this.claims.delete(k);
    const key = `${monitorId}\n${after}`;
    if (this.claims.has(key)) return null;
    const claimId = randomUUID();
    this.claims.set(key, { claimId, at: now });
    return claimId;
  }

  async releaseCheck(monitorId: string, after: string, claimId: string): Promise<void> {
    const key = `${monitorId}\n${after}`;
    if (this.claims.get(key)?.claimId === claimId) this.claims.delete(key);
  }

  async close(): Promise<void> {
    await this.log.close();
  }
}
