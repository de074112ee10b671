// The record of a POST /v2/extract job in the store: documents of the pseudo crawl `extract:<id>`, so that any API
// replica answers GET /v2/extract/:id and any replica can resume the job. The rows say what remains:
// - `state-0` (seq 0): the job as submitted (processing), with its request;
// - `step-<name>` (seq 1 + step index): one finished step (a page scraped, a path crawl read back, a stored crawl
//   extracted again) with its page results, so a resumed job does not redo it;
// - `state-1` (seq FINAL_SEQ): the final state, completed or failed.
// Each page the job fetches is kept as fetched, until the retention sweep, under the pseudo crawl `extract:<id>:fetched`
// (seq = the page's index): a job resumed after its owner died converts and extracts it again instead of fetching it.
// They live apart from the record so that reading the record (at each start of the job) does not read page bodies.
// Every row is written under a fixed url key and the first row of a url key wins at read (both stores), so a step or
// the end written twice (a replica that ran on after losing its partition) shows once, as first written.
import type { ExtractRequest } from "../../schemas/index.ts";
import type { FetchedPage } from "../convert/document.ts";
import type { PageResult } from "../extract-json/merge.ts";
import { extractJobId } from "../runtime/constants.ts";
import type { Clock } from "../runtime/clock.ts";
import type { CrawlStore } from "../store/crawl-store.ts";

export interface ExtractState {
  status: "processing" | "completed" | "failed";
  data?: unknown;
  sources?: Record<string, unknown>;
  tokensUsed: number;
  expiresAt: number;
  error?: string;
  warning?: string;
  showSources: boolean;
  /** the team that asked (GET answers only that team) */
  teamId: string;
  /** state-0 only: what was asked (the job can be resumed from its record) */
  request?: ExtractRequest;
}

/** What one finished step of a job produced. */
export interface StepResult {
  step: string;
  results: PageResult[];
  tokens: number;
  warnings: string[];
  /** What this step is charged (pages it extracted itself: what a json-format scrape of each costs; absent in older records) */
  credits?: number;
}

const FINAL_SEQ = 1_000_000;
const MAX_ROWS = 10_000;

type RecordDeps = { store: CrawlStore; clock: Clock };

function row(deps: RecordDeps, id: string, seq: number, urlKey: string, doc: unknown) {
  return {
    crawlId: extractJobId(id), seq, urlKey, finalKey: urlKey, scrapeId: id, url: "", statusCode: 200, credits: 0,
    storedAt: deps.clock.now(), doc: JSON.stringify(doc),
  };
}

export const saveSubmitted = (deps: RecordDeps, id: string, state: ExtractState) => deps.store.insertDocuments([row(deps, id, 0, "state-0", state)]);

export const saveFinal = (deps: RecordDeps, id: string, state: ExtractState) => deps.store.insertDocuments([row(deps, id, FINAL_SEQ, "state-1", state)]);

export const saveStep = (deps: RecordDeps, id: string, index: number, result: StepResult) =>
  deps.store.insertDocuments([row(deps, id, 1 + index, `step-${result.step}`, result)]);

export interface JobRecord {
  /** the final state when the job ended, else the submitted one; undefined: no such job */
  state?: ExtractState;
  ended: boolean;
  steps: Map<string, StepResult>;
}

/**
 * The job's state for GET: the end when it is stored, else the submitted state; two one-row reads, so that polling a
 * job never reads its steps (their results can be large). The end has the highest seq and is written last (a job writes
 * no step after its end), so `seq >= FINAL_SEQ` finds it in both stores; a row found there that is not an end (never
 * expected) falls back to reading every row.
 */
export async function readState(store: CrawlStore, id: string): Promise<ExtractState | undefined> {
  const end = (await store.pageDocuments(extractJobId(id), FINAL_SEQ, Number.MAX_SAFE_INTEGER, 1)).docs[0];
  if (end !== undefined) {
    const state = JSON.parse(end) as Partial<ExtractState>;
    if (state.status === "completed" || state.status === "failed") return state as ExtractState;
    return (await readRecord(store, id)).state;
  }
  const first = (await store.pageDocuments(extractJobId(id), 0, Number.MAX_SAFE_INTEGER, 1)).docs[0];
  return first === undefined ? undefined : (JSON.parse(first) as ExtractState);
}

/** Every row of the job (a job has at most a few hundred: one per URL or crawl it names, plus two). */
export async function readRecord(store: CrawlStore, id: string): Promise<JobRecord> {
  const page = await store.pageDocuments(extractJobId(id), 0, Number.MAX_SAFE_INTEGER, MAX_ROWS);
  const out: JobRecord = { ended: false, steps: new Map() };
  for (const text of page.docs) {
    const doc = JSON.parse(text) as Partial<ExtractState> & Partial<StepResult>;
    if (typeof doc.step === "string") out.steps.set(doc.step, doc as StepResult);
    else if (doc.status !== undefined && doc.status !== "processing") {
      if (!out.ended) Object.assign(out, { state: doc as ExtractState, ended: true });
    } else if (!out.ended) out.state = doc as ExtractState;
  }
  return out;
}

const fetchedPagesId = (id: string) => `${extractJobId(id)}:fetched`;

interface FetchedRow {
  index: number;
  page: Omit<FetchedPage, "bytes">;
  /** a PDF's bytes */
  bytesBase64?: string;
}

/** Keeps page `index` of the job as fetched. */
export function saveFetched(deps: RecordDeps, id: string, index: number, page: FetchedPage): Promise<void> {
  const { bytes, ...rest } = page;
  const doc: FetchedRow = { index, page: rest, ...(bytes ? { bytesBase64: Buffer.from(bytes).toString("base64") } : {}) };
  return deps.store.insertDocuments([{ ...row(deps, id, index, `fetched-${index}`, doc), crawlId: fetchedPagesId(id), url: page.url, statusCode: page.statusCode }]);
}

/** Page `index` of the job as an earlier run fetched it, or undefined. */
export async function readFetched(store: CrawlStore, id: string, index: number): Promise<FetchedPage | undefined> {
  const text = (await store.pageDocuments(fetchedPagesId(id), index, Number.MAX_SAFE_INTEGER, 1)).docs[0];
  if (text === undefined) return undefined;
  const doc = JSON.parse(text) as FetchedRow;
  if (doc.index !== index) return undefined; // the next page's: this one was not fetched
  return { ...doc.page, ...(doc.bytesBase64 !== undefined ? { bytes: Buffer.from(doc.bytesBase64, "base64") } : {}) };
}
