// admission: the per-team concurrency limit across all of a team's crawls and batch scrapes. Consumes team.admission
// (keyed by team id, so one owner sees every job of a team ask to run and end, in order) and answers Admitted on
// frontier.inbox. Nothing of its own is persisted: a team's queue is rebuilt from the crawl records (held ones wait,
// the others run) the first time the team is seen after a start or a rebalance. An Admitted whose effect the store
// does not show yet is sent again at worst; the frontier ignores a second one.
import type { FrontierInboxMessage, TeamAdmissionMessage } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { PartitionCache } from "../runtime/partition-cache.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { keys } from "../topology.ts";
import { admit, endJob, enqueueJob, queueOf, type TeamQueue } from "./team-queue.ts";

export interface AdmissionDeps {
  store: CrawlStore;
  clock: Clock;
  log: Logger;
  /** The team's limit of jobs running at once (0: no limit). */
  limitOf: (teamId: string) => Promise<number>;
}

export class AdmissionProcessor extends DeclaredProcessor implements Processor<TeamAdmissionMessage, void> {
  readonly mode = "ordered" as const;
  readonly concurrency = 1;
  private readonly teams = new PartitionCache<TeamQueue>();
  private readonly deps: AdmissionDeps;
  private readonly log: Logger;

  constructor(deps: AdmissionDeps) {
    super("admission");
    this.deps = deps;
    this.log = deps.log.child({ component: "admission" });
  }

  createBatch(): void {}

  onPartitionsAssigned(partitions: number[]): void {
    this.teams.retain(partitions);
  }

  private async queue(teamId: string, partition: number): Promise<TeamQueue> {
    let q = this.teams.get(teamId);
    if (!q) {
      q = queueOf(await this.deps.store.activeCrawls(teamId));
      this.teams.set(teamId, partition, q);
    }
    return q;
  }

  /** Running jobs whose end was never announced (a record that is terminal or gone) free their slot. */
  private async reconcile(q: TeamQueue): Promise<void> {
    const records = await Promise.all([...q.running].map((id) => this.deps.store.getCrawl(id)));
    [...q.running].forEach((id, i) => {
      const r = records[i];
      if (!r || r.status !== "scraping") {
        this.log.warn({ crawlId: id }, "a job ended without JobEnded: its slot is freed");
        endJob(q, id);
      }
    });
  }

  async handle(msg: Consumed<TeamAdmissionMessage>): Promise<Emission[]> {
    const m = msg.value;
    const q = await this.queue(m.teamId, msg.partition);
    if (m.type === "JobQueued") enqueueJob(q, m.crawlId, m.at);
    else endJob(q, m.crawlId);
    const limit = await this.deps.limitOf(m.teamId);
    const now = this.deps.clock.now();
    const trigger = m.type === "JobQueued" ? m.crawlId : undefined;
    let admitted = admit(q, limit, now, trigger);
    if (q.waiting.length > 0 && limit > 0) {
      await this.reconcile(q);
      admitted = [...admitted, ...admit(q, limit, now, trigger)];
    }
    if (q.waiting.length > 0) this.log.info({ teamId: m.teamId, running: q.running.size, waiting: q.waiting.length, limit }, "jobs wait for the team's concurrency limit");
    return admitted.map((a) => {
      const value: FrontierInboxMessage = { type: "Admitted", crawlId: a.crawlId, limited: a.limited, queuedMs: a.queuedMs };
      return { topic: "frontier.inbox", key: keys.crawl(a.crawlId), value };
    });
  }
}
