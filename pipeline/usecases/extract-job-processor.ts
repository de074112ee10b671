// The api role's consumer of extract.jobs (group `extract-jobs`, shared by the API replicas): runs each POST
// /v2/extract job to its end (extract-run.ts). The offset moves only after the job's final state is stored, so the job
// of a replica that died is redelivered to the replica that gets its partition (or to this process when it starts
// again), which resumes it from its record. Why a consumer group rather than a lease: extract-job.ts.
import type { ExtractJob } from "../../schemas/index.ts";
import type { Consumed, Emission, Processor } from "../runtime/bus.ts";
import { DeclaredProcessor } from "../runtime/declared-processor.ts";
import { runExtractJob, type ExtractDeps } from "./extract-run.ts";

/** Jobs run at once per partition batch; a job mostly waits (for pages, a crawl), so more than CPU cores. */
const JOBS_AT_ONCE = 16;

export class ExtractJobProcessor extends DeclaredProcessor implements Processor<ExtractJob, void> {
  readonly mode = "parallel" as const;
  readonly concurrency = JOBS_AT_ONCE;
  private readonly deps: ExtractDeps;
  private readonly stopping = new AbortController();

  constructor(deps: ExtractDeps) {
    super("extract-jobs");
    this.deps = deps;
  }

  /** Called before the consume loops stop: running jobs give up at once (uncommitted, they run again after). */
  prepareStop(): void {
    this.stopping.abort();
  }

  createBatch(): void {}

  async handle(msg: Consumed<ExtractJob>): Promise<Emission[]> {
    const outcome = await runExtractJob(this.deps, msg.value, this.stopping.signal);
    if (outcome === "already-ended") this.deps.log.info({ extractId: msg.value.jobId }, "extract job already ended; redelivery skipped");
    return [];
  }
}
