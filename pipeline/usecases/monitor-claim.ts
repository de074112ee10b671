// Starting a monitor's check under a claim: "run now" and each scheduled tick first claim the check that follows the
// monitor's latest started check (MonitorStore.claimCheck: a test-and-set in the embedded store, insert-wait-read in
// ClickHouse), so of racing starters — ten concurrent POST …/run, a run and a tick, two API replicas firing one tick —
// one starts a check and the others start nothing (409, or the tick waits for the next poll). The claim is given up
// when its check did not start (an overlap, no credits, an error); once the check's row is written, the next claim
// follows that check. A manual check's id is derived from the check it follows: two starters that both won (a lapsed
// claim) would still submit one job of one id, billed once.
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { InfrastructureError } from "../runtime/errors.ts";
import type { CheckRow, MonitorRecord } from "../store/monitor-store.ts";
import { runCheck, runningCheck, scheduledCheckId, type MonitorDeps } from "./monitors.ts";

export type StartResult = { checkId: string; outcome: CheckRow["outcome"] } | { checkId: null; outcome: "busy" };

/** The id of the manual check that follows `after` (a UUID, like a scheduled check's). */
export function manualCheckId(monitorId: string, after: string): string {
  const h = createHash("sha256").update(`${monitorId}\nmanual\n${after}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h.slice(16, 17), 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The monitor's latest started check ("" before its first): what the next claim follows. Latest by when its row was
 * written, not by its tick (a missed tick can start after a manual check): a claim's check, once started, is followed
 * by every later claim, so a claim that won is never competed with again.
 */
async function latestStarted(deps: MonitorDeps, monitorId: string): Promise<string> {
  let latest: CheckRow | undefined;
  for (const c of await deps.monitors.listChecks(monitorId)) {
    if (c.outcome === "started" && (!latest || c.createdAt > latest.createdAt || (c.createdAt === latest.createdAt && c.checkId > latest.checkId))) latest = c;
  }
  return latest?.checkId ?? "";
}

async function claimed<O extends string>(deps: MonitorDeps, m: MonitorRecord, after: string, checkId: string, run: () => Promise<O>): Promise<{ checkId: string; outcome: O } | { checkId: null; outcome: "busy" }> {
  const claim = await deps.monitors.claimCheck(m.monitorId, after, checkId);
  if (claim === null) return { checkId: null, outcome: "busy" };
  let outcome: O | undefined;
  try {
    outcome = await run();
    return { checkId, outcome };
  } finally {
    if (outcome !== "started") await deps.monitors.releaseCheck(m.monitorId, after, claim);
  }
}

/** POST /v2/monitor/:id/run: "busy" while a check runs or another starter holds the claim (the route answers 409). */
export async function runNow(deps: MonitorDeps, m: MonitorRecord): Promise<StartResult> {
  if (await runningCheck(deps, m.monitorId)) return { checkId: null, outcome: "busy" };
  const after = await latestStarted(deps, m.monitorId);
  const checkId = manualCheckId(m.monitorId, after);
  return claimed(deps, m, after, checkId, () => runCheck(deps, m, checkId, "manual", deps.clock.now()));
}

/** A scheduled tick: "busy" when another starter holds the claim (the tick stays due: the next poll tries again). */
export async function runTick(deps: MonitorDeps, m: MonitorRecord, tick: number): Promise<StartResult> {
  const checkId = scheduledCheckId(m.monitorId, tick);
  const after = await latestStarted(deps, m.monitorId);
  // this tick's check started already (another replica, or this one before a crash): resuming it claims nothing
  if (after === checkId) return { checkId, outcome: await runCheck(deps, m, checkId, "scheduled", tick) };
  const result = await claimed(deps, m, after, checkId, async () => {
    // read again under the claim: a pause or a new schedule written since the poll read the monitor stops the tick
    // (a pause takes the claim too, so none starts once the pause is written)
    const now = await deps.monitors.getMonitor(m.monitorId);
    if (!now || now.status !== "active" || now.anchor !== m.anchor) return "stale";
    return runCheck(deps, m, checkId, "scheduled", tick);
  });
  return result.outcome === "stale" ? { checkId: null, outcome: "busy" } : (result as StartResult);
}

/**
 * Writes a pause or a delete (`write`) while holding the monitor's next claim: a check being started (its claim won,
 * its row not yet written) is waited for, and no tick starts a check once `write` is done. Gives up after `waitMs`.
 */
export async function withoutNewChecks(deps: MonitorDeps, m: MonitorRecord, write: () => Promise<void>, waitMs = 30_000): Promise<void> {
  const until = Date.now() + waitMs;
  for (;;) {
    const after = await latestStarted(deps, m.monitorId);
    const claim = await deps.monitors.claimCheck(m.monitorId, after, "");
    if (claim !== null) {
      try {
        return await write();
      } finally {
        await deps.monitors.releaseCheck(m.monitorId, after, claim);
      }
    }
    if (Date.now() > until) throw new InfrastructureError("STORE_UNAVAILABLE", "a monitor check being started held the monitor too long; try again");
    await sleep(100);
  }
}
