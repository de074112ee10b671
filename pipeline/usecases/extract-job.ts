// POST /v2/extract as a job: pages are scraped (a URL ending in `/*` is a crawl of that path, run by the pipeline) or
// read back from a finished crawl (crawlId: no fetch), each page's json is extracted with the configured provider,
// and the results are merged into one answer (extract-run.ts).
// Durability: the API stores the job (extract-record.ts) and hands it to the `extract.jobs` topic; the api role's
// `extract-jobs` consumer group runs it, and commits the offset only once the final state is stored. A replica that
// dies (kill -9) leaves the offset uncommitted: Kafka's group rebalancing gives the partition to another replica after
// KAFKA_SESSION_TIMEOUT_MS (the embedded bus redelivers it when the process starts again), which resumes the job from
// its record, skipping the steps already stored. Chosen over a lease in the store because ClickHouse (18.16 included)
// has no compare-and-set to make a lease exclusive, while a consumer group gives each partition exactly one owner and
// already detects a dead one; the same at-least-once machinery runs every stage.
import { randomUUID } from "node:crypto";
import type { ExtractJob, ExtractRequest } from "../../schemas/index.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { errorMessage, invalidField } from "../runtime/errors.ts";
import { keys } from "../topology.ts";
import { checkStartUrl } from "../url/start-url.ts";
import { compileUserSchema, InvalidSchemaError } from "../extract-json/user-schema.ts";
import { readState, saveFinal, saveSubmitted, type ExtractState } from "./extract-record.ts";
import type { CrawlDeps } from "./submit-crawl.ts";
import type { TeamAccess } from "./team-access.ts";

export type { ExtractState };

export type SubmitExtractDeps = CrawlDeps & { allowPrivate: boolean; access?: TeamAccess };

/** Pages a `/*` wildcard crawls when the request gives no limit. */
export const DEFAULT_WILDCARD_LIMIT = 50;

/** Credits a request needs to start (the anchor's rule: one per URL, and at least one), refused with 402 when missing. */
export const extractRequired = (req: ExtractRequest) => Math.max(1, (req.urls?.length ?? 0) + (req.crawlId !== undefined ? 1 : 0));

const WILDCARD = /\/\*$/;

export interface Plan {
  pages: string[];
  crawls: string[];
  /** finished crawls whose stored pages are extracted again (crawlId, or `crawl:<id>` in urls) */
  stored: string[];
  warnings: string[];
}

const STORED = /^crawl:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** Checks the request (400s before any job exists) and splits its URLs into pages and path crawls. */
export function plan(req: ExtractRequest, allowPrivate: boolean): Plan {
  if (req.enableWebSearch) throw invalidField(["enableWebSearch"], "enableWebSearch is not available on this server (it has no web search); pass the pages in urls");
  if (req.systemPrompt !== undefined) throw invalidField(["systemPrompt"], "systemPrompt is not supported by this server; put the instructions in prompt");
  if (!req.prompt && !req.schema) throw invalidField(["schema"], "Either prompt or schema is required");
  if (req.schema) {
    try {
      compileUserSchema(req.schema);
    } catch (err) {
      if (err instanceof InvalidSchemaError) throw invalidField(["schema"], err.message);
      throw err;
    }
  }
  const out: Plan = { pages: [], crawls: [], stored: req.crawlId !== undefined ? [req.crawlId] : [], warnings: [] };
  if (req.crawlId !== undefined && !req.urls?.length) return out;
  if (!req.urls || req.urls.length === 0) throw invalidField(["urls"], "urls is required (or crawlId, to extract again from a finished crawl)");
  req.urls.forEach((raw, i) => {
    const stored = STORED.exec(raw.trim());
    if (stored) return void out.stored.push(stored[1] as string);
    const wildcard = WILDCARD.test(raw);
    try {
      const url = checkStartUrl(raw.replace(WILDCARD, "/"), allowPrivate);
      (wildcard ? out.crawls : out.pages).push(url);
    } catch (err) {
      if (!req.ignoreInvalidURLs) throw invalidField(["urls", i], `${raw}: ${errorMessage(err)}`);
      out.warnings.push(`skipped invalid URL ${raw}: ${errorMessage(err)}`);
    }
  });
  if (out.pages.length + out.crawls.length + out.stored.length === 0) throw invalidField(["urls"], "no valid URL in urls");
  return out;
}

/** The job's latest state, or undefined when there is no such job (or it is another team's). */
export async function readExtract(deps: Pick<CrawlDeps, "store" | "clock">, teamId: string, id: string): Promise<ExtractState | undefined> {
  const state = await readState(deps.store, id);
  // past its expiresAt a job is gone, as a crawl is (its rows may wait for the next sweep)
  if (!state || state.teamId !== teamId || state.expiresAt <= deps.clock.now()) return undefined;
  const { request: _request, ...shown } = state;
  return shown;
}

/** Validates, stores the job as processing, and hands it to the extract-jobs consumers. Returns the job id. */
export async function startExtract(deps: SubmitExtractDeps, request: ExtractRequest, teamId: string): Promise<string> {
  const p = plan(request, deps.allowPrivate);
  for (const crawlId of p.stored) {
    const crawl = await deps.store.getCrawl(crawlId);
    if (!crawl || crawl.teamId !== teamId) throw invalidField(["crawlId"], `no crawl ${crawlId}`);
    if (crawl.status === "scraping") throw invalidField(["crawlId"], `crawl ${crawlId} is still running; extract again once it has finished`);
  }
  // a wildcard's crawl is lowered to the credits left, as a crawl's limit is (the job carries the lowered limit)
  const limit = await deps.access?.admit(teamId, extractRequired(request), p.crawls.length ? (request.limit ?? DEFAULT_WILDCARD_LIMIT) : undefined);
  const req: ExtractRequest = limit !== undefined && p.crawls.length ? { ...request, limit } : request;
  const id = randomUUID();
  const now = deps.clock.now();
  const state: ExtractState = { status: "processing", tokensUsed: 0, expiresAt: now + RETENTION_MS, showSources: req.showSources === true, teamId, request: req };
  await saveSubmitted(deps, id, state);
  const job: ExtractJob = { jobId: id, teamId, request: req, createdAt: now };
  try {
    await deps.bus.produce([{ topic: "extract.jobs", key: keys.extractJob(id), value: job }]);
  } catch (err) {
    // never leave a job that nobody will run in `processing`
    await saveFinal(deps, id, { ...state, request: undefined, status: "failed", error: "the extract job could not be queued" })
      .catch((e) => deps.log.error({ err: e, extractId: id }, "could not mark an unqueued extract job failed"));
    throw err;
  }
  deps.log.info({ extractId: id, pages: p.pages.length, crawls: p.crawls.length, stored: p.stored.length }, "extract job submitted");
  return id;
}
