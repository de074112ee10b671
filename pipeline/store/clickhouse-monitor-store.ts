// ClickHouse adapter of the MonitorStore port. monitors: ReplacingMergeTree(version), read with argMax so that the
// latest version wins before a merge too; monitor_checks: one row per check (two replicas firing the same tick write
// the same key; reads group by it). Neither table is partitioned by day: schedules outlive the results' retention.
// monitor_claims: one row per claim of a monitor's next check (and one per claim given up), not partitioned either.
//
// A claim without compare-and-set (ClickHouse 18.16 has none): insert, wait CLAIM_SETTLE_MS from the claim's time,
// read the claims of the same monitor and `after`: the earliest (time, random id) not given up wins; every other claim
// is given up (a row with released = 1), and so is one whose insert took CLAIM_SETTLE_MS or more. Two winners cannot
// be: if P's claim is earlier than Q's and Q won, Q read (at q.at + SETTLE or later, so at p.at + SETTLE or later)
// without seeing P's claim, so P's insert returned after p.at + SETTLE, and P gave up. Needs the claimers' clocks to
// agree (one host's, or NTP's milliseconds against 500 ms) and a read to see every insert that returned before it
// started (one server; with replicas, insert_quorum).
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ClickHouseClient } from "./clickhouse.ts";
import { CLAIM_LAPSE_MS, type CheckRow, type MonitorRecord, type MonitorStatus, type MonitorStore } from "./monitor-store.ts";
import { raw, sql } from "./sql.ts";

/** How long a claim waits before reading the others back; a claim whose insert takes this long gives up. */
export const CLAIM_SETTLE_MS = 500;
const CLAIM_COLUMNS = ["monitor_id", "after_check", "check_id", "claim_id", "at", "released"];

const COLUMNS = ["monitor_id", "version", "team_id", "name", "status", "body", "anchor", "created_at", "updated_at"];
const CHECK_COLUMNS = ["monitor_id", "check_id", "team_id", "run_trigger", "scheduled_for", "created_at", "outcome"];
/** Aliases unlike the column names (ClickHouse 18.16 substitutes an alias equal to a column into its own aggregate). */
const LATEST = COLUMNS.filter((c) => c !== "monitor_id").map((c) => `argMax(${c}, version) AS l_${c}`).join(", ");

interface Row { monitor_id: string; l_version: unknown; l_team_id: string; l_name: string; l_status: string; l_body: string; l_anchor: unknown; l_created_at: unknown; l_updated_at: unknown }

const toRecord = (r: Row): MonitorRecord => ({
  monitorId: r.monitor_id, version: Number(r.l_version), teamId: r.l_team_id, name: r.l_name, status: r.l_status as MonitorStatus, body: r.l_body,
  anchor: Number(r.l_anchor), createdAt: Number(r.l_created_at), updatedAt: Number(r.l_updated_at),
});

export class ClickHouseMonitorStore implements MonitorStore {
  private readonly ch: ClickHouseClient;
  private readonly now: () => number;

  constructor(ch: ClickHouseClient, now: () => number = Date.now) {
    this.ch = ch;
    this.now = now;
  }

  async saveMonitor(r: MonitorRecord): Promise<void> {
    await this.ch.insert("monitors", COLUMNS, [[r.monitorId, r.version, r.teamId, r.name, r.status, r.body, r.anchor, r.createdAt, r.updatedAt]]);
  }

  async getMonitor(monitorId: string): Promise<MonitorRecord | null> {
    const rows = await this.ch.query<Row>(sql`SELECT monitor_id, ${raw(LATEST)} FROM ${raw(this.ch.table("monitors"))} WHERE monitor_id = ${monitorId} GROUP BY monitor_id`);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listMonitors(teamId: string | null): Promise<MonitorRecord[]> {
    const team = teamId === null ? raw("") : sql`WHERE team_id = ${teamId}`;
    const rows = await this.ch.query<Row>(sql`SELECT monitor_id, ${raw(LATEST)} FROM ${raw(this.ch.table("monitors"))} ${team}
      GROUP BY monitor_id HAVING l_status != 'deleted' ORDER BY l_created_at DESC`);
    return rows.map(toRecord);
  }

  async saveCheck(row: CheckRow): Promise<void> {
    await this.ch.insert("monitor_checks", CHECK_COLUMNS, [[row.monitorId, row.checkId, row.teamId, row.trigger, row.scheduledFor, row.createdAt, row.outcome]]);
  }

  async listChecks(monitorId: string): Promise<CheckRow[]> {
    const rows = await this.ch.query<{ check_id: string; team: string; trig: string; tick: unknown; created: unknown; res: string }>(sql`SELECT check_id, any(team_id) AS team,
      any(run_trigger) AS trig, min(scheduled_for) AS tick, min(created_at) AS created,
      if(countIf(outcome = 'started') > 0, 'started', any(outcome)) AS res FROM ${raw(this.ch.table("monitor_checks"))}
      WHERE monitor_id = ${monitorId} GROUP BY check_id ORDER BY tick DESC, check_id`);
    return rows.map((r) => ({ monitorId, checkId: r.check_id, teamId: r.team, trigger: r.trig as CheckRow["trigger"], scheduledFor: Number(r.tick), createdAt: Number(r.created), outcome: r.res as CheckRow["outcome"] }));
  }

  async lastScheduled(monitorIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (monitorIds.length === 0) return out;
    const ids = raw(monitorIds.map((id) => sql`${id}`.text).join(", "));
    const rows = await this.ch.query<{ monitor_id: string; last: unknown }>(sql`SELECT monitor_id, max(scheduled_for) AS last FROM ${raw(this.ch.table("monitor_checks"))}
      WHERE monitor_id IN (${ids}) AND run_trigger = 'scheduled' GROUP BY monitor_id`);
    for (const r of rows) out.set(r.monitor_id, Number(r.last));
    return out;
  }

  async claimCheck(monitorId: string, after: string, checkId: string): Promise<string | null> {
    const claimId = randomUUID();
    const at = this.now();
    await this.ch.insert("monitor_claims", CLAIM_COLUMNS, [[monitorId, after, checkId, claimId, at, 0]]);
    if (this.now() >= at + CLAIM_SETTLE_MS) {
      await this.releaseCheck(monitorId, after, claimId);
      return null;
    }
    await sleep(at + CLAIM_SETTLE_MS - this.now() + 1); // a timer may fire up to a millisecond early
    const rows = await this.ch.query<{ claim_id: string; at: unknown; released: unknown }>(sql`SELECT claim_id, at, released FROM ${raw(this.ch.table("monitor_claims"))}
      WHERE monitor_id = ${monitorId} AND after_check = ${after} AND at >= ${at - CLAIM_LAPSE_MS}`);
    const released = new Set(rows.filter((r) => Number(r.released) === 1).map((r) => r.claim_id));
    const live = rows.filter((r) => Number(r.released) === 0 && !released.has(r.claim_id)).map((r) => ({ id: r.claim_id, at: Number(r.at) }));
    live.sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (live[0]?.id === claimId) return claimId;
    // a claim that lost is given up too: left, it would be the earliest once the winner's is released (its check skipped)
    await this.releaseCheck(monitorId, after, claimId);
    return null;
  }

  async releaseCheck(monitorId: string, after: string, claimId: string): Promise<void> {
    await this.ch.insert("monitor_claims", CLAIM_COLUMNS, [[monitorId, after, "", claimId, this.now(), 1]]);
  }

  async close(): Promise<void> {}
}
