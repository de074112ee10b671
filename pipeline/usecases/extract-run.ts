// Runs one POST /v2/extract job to its end, resumably: each step (a stored crawl extracted again, a page scraped, a
// path crawl run and read back) is stored when it finishes (extract-record.ts), and a job run again after its owner
// died skips the steps its record already has. A page is kept as soon as it is fetched, so a resumed job converts and
// extracts a page it had fetched without fetching it again. A path crawl has a fixed id derived from the job id, so a
// resumed job finds (or re-queues) the crawl it started instead of starting a second one: nothing is fetched or charged
// twice, except a page whose fetch was in flight when the owner died.
import { createHash } from "node:crypto";
import type { ExtractJob, PageDocument } from "../../schemas/index.ts";
import { extractInto } from "../extract-json/extract-page.ts";
import { htmlOfDocument } from "../extract-json/from-document.ts";
import type { JsonSchema } from "../extract-json/json-schema.ts";
import { mergeResults, type PageResult } from "../extract-json/merge.ts";
import { rulesProvider } from "../extract-json/rules.ts";
import { parseHtml } from "../convert/parse-html.ts";
import type { FetchedPage } from "../convert/document.ts";
import { RETENTION_MS } from "../runtime/constants.ts";
import { errorMessage, PageError, TrawlError } from "../runtime/errors.ts";
import { sleep } from "../runtime/retry.ts";
import { DEFAULT_WILDCARD_LIMIT, plan } from "./extract-job.ts";
import { JSON_FORMAT_CREDITS } from "../extract-json/extract-json.ts";
import type { AuthStore } from "../store/auth-store.ts";
import { documentTokens } from "../store/crawl-store.ts";
import { extractJobId } from "../runtime/constants.ts";
import { readFetched, readRecord, saveFetched, saveFinal, saveStep, type ExtractState, type StepResult } from "./extract-record.ts";
import { crawlOptions, scrapeSettings } from "./request-options.ts";
import { scrapePage, type StoredScrapeDeps } from "./scrape-page.ts";
import { ensureCrawl, type CrawlDeps } from "./submit-crawl.ts";

export type ExtractDeps = StoredScrapeDeps & CrawlDeps & { allowPrivate: boolean; fetchTimeoutMs: number; authStore?: Pick<AuthStore, "recordUsage"> };

/**
 * What an extract job is charged: each page it extracts itself (scraped for the job, or read back from a finished
 * crawl) costs what a scrape with a json format costs (JSON_FORMAT_CREDITS), and the LLM tokens of those pages. Pages
 * of a `/*` wildcard are a crawl of the team with a json format, billed as such (credits and tokens on the crawl),
 * so they are not charged twice. A job that fails is not charged.
 */
export function extractCharge(steps: StepResult[]): { credits: number; tokens: number } {
  const own = steps.filter((s) => !s.step.startsWith("crawl-"));
  // steps stored before `credits` existed: the flat rate per page
  return { credits: own.reduce((n, s) => n + (s.credits ?? s.results.length * JSON_FORMAT_CREDITS), 0), tokens: own.reduce((n, s) => n + s.tokens, 0) };
}

/** A page's charge as a json-format scrape: JSON_FORMAT_CREDITS, or its PDF pages when it has more. */
const pageCharge = (d: PageDocument) => Math.max(JSON_FORMAT_CREDITS, Number(d.metadata.numPages ?? 0) || 0);
const CRAWL_WAIT_MS = 10 * 60_000;

/** The job was interrupted by a stop of this process: retriable, so its message stays uncommitted and runs again. */
export const interrupted = () => new TrawlError("JOB_INTERRUPTED", "the process is stopping; the job resumes in another run", { retriable: true });

/** A path crawl's id: fixed per job and URL index, so a resumed job finds the crawl it started. */
export function jobCrawlId(jobId: string, index: number): string {
  const h = createHash("sha256").update(`extract:${jobId}:crawl:${index}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 17), 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Rejects once `signal` aborts, so a job does not hold a stop while a page or a crawl takes its time. */
function unlessStopped<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(interrupted());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(interrupted());
    signal.addEventListener("abort", stop, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

const resultOf = (d: PageDocument): PageResult => ({ url: String(d.metadata.url), data: d.json, sources: ((d.metadata.extract as { sources?: Record<string, unknown> } | undefined)?.sources ?? {}) });
const warningsOf = (docs: PageDocument[]) => docs.flatMap((d) => (d.warning ? [`${String(d.metadata.url)}: ${String(d.warning)}`] : []));

function stepOf(step: string, docs: PageDocument[], warnings: string[] = []): StepResult {
  const credits = step.startsWith("crawl-") ? 0 : docs.reduce((n, d) => n + pageCharge(d), 0); // a path crawl is billed as the crawl
  return { step, results: docs.map(resultOf), tokens: docs.reduce((n, d) => n + documentTokens(d), 0), warnings: [...warnings, ...warningsOf(docs)], credits };
}

/**
 * Runs (or resumes) the job and stores its final state. Page failures and a crawl that never ends are data (the job
 * ends `failed` or with warnings); a store or bus failure, and a stop (`signal`), throw for the caller to retry.
 */
export async function runExtractJob(deps: ExtractDeps, job: ExtractJob, signal: AbortSignal): Promise<"done" | "already-ended"> {
  const { jobId: id, teamId, request: req } = job;
  const record = await readRecord(deps.store, id);
  if (record.ended) return "already-ended"; // redelivered after its end was stored, before the offset moved
  const log = deps.log.child({ extractId: id });
  const showSources = req.showSources === true;
  if (record.steps.size > 0) log.info({ stepsDone: [...record.steps.keys()] }, "extract job resumed");
  else log.info("extract job running");
  let ended = false;
  const end = (state: Omit<ExtractState, "expiresAt" | "showSources" | "teamId">) => {
    ended = true; // a step still in flight (a page, when a crawl failed the job) is not stored after the end
    return saveFinal(deps, id, { ...state, expiresAt: deps.clock.now() + RETENTION_MS, showSources, teamId });
  };
  try {
    const p = plan(req, deps.allowPrivate);
    const json = { ...(req.schema ? { schema: req.schema as JsonSchema } : {}), ...(req.prompt ? { prompt: req.prompt } : {}) };
    const names = [...p.stored.map((_, i) => `stored-${i}`), ...p.pages.map((_, i) => `page-${i}`), ...p.crawls.map((_, i) => `crawl-${i}`)];
    const done = async (result: StepResult) => {
      if (ended) return;
      await saveStep(deps, id, names.indexOf(result.step), result);
      record.steps.set(result.step, result);
      log.info({ step: result.step, pages: result.results.length }, "extract step done");
    };
    const todo = (name: string) => !record.steps.has(name);

    for (const [i, crawlId] of p.stored.entries()) {
      if (!todo(`stored-${i}`)) continue;
      // again from the stored pages: no fetch
      const provider = deps.extractor ?? rulesProvider(parseHtml);
      const stored = await storedDocuments(deps, crawlId);
      for (const doc of stored) await unlessStopped(extractInto(doc, { url: String(doc.metadata.url), html: htmlOfDocument(doc), markdown: doc.markdown ?? "" }, { json }, provider, deps.log), signal);
      await done(stepOf(`stored-${i}`, stored, stored.length === 0 ? [`crawl ${crawlId} has no stored pages`] : []));
    }

    // pages and path crawls at once; each stored as soon as it is done
    const settings = scrapeSettings({ ...(req.scrapeOptions ?? {}), formats: ["markdown", { type: "json", ...json }] }, ["scrapeOptions"]);
    const pages = p.pages.map(async (url, i) => {
      if (!todo(`page-${i}`)) return;
      // fetched by an earlier run of this job that stopped before the page's step was stored: not fetched again
      const fetched = await readFetched(deps.store, id, i);
      if (fetched) log.info({ step: `page-${i}`, url }, "extract page fetched before; converted again");
      let step: StepResult;
      try {
        const before = fetched ? { fetched } : { onFetched: (page: FetchedPage) => saveFetched(deps, id, i, page) };
        const { document } = await scrapePage(deps, url, settings, settings.timeoutMs ?? deps.fetchTimeoutMs, before);
        step = stepOf(`page-${i}`, [document]);
      } catch (err) {
        // the store could not keep the page (down): not a page failure, the job runs again
        if (err instanceof TrawlError && err.retriable && !(err instanceof PageError)) throw err;
        step = stepOf(`page-${i}`, [], [`${url}: ${errorMessage(err)}`]); // a page that failed is data: not retried on resume
      }
      if (!signal.aborted) await done(step);
    });
    const crawls = p.crawls.map(async (url, i) => {
      if (!todo(`crawl-${i}`)) return;
      const crawlId = jobCrawlId(id, i);
      const options = crawlOptions({ url, limit: req.limit ?? DEFAULT_WILDCARD_LIMIT, ...(req.allowExternalLinks ? { allowExternalLinks: true } : {}), ...(req.includeSubdomains ? { allowSubdomains: true } : {}), ...(req.ignoreSitemap ? { sitemap: "skip" as const } : {}), scrapeOptions: { ...(req.scrapeOptions ?? {}), formats: ["markdown", { type: "json", ...json }] } }, DEFAULT_WILDCARD_LIMIT);
      await ensureCrawl(deps, { id: crawlId, url, options, teamId, webhook: "" });
      await waitForCrawl(deps, crawlId, signal);
      await done(stepOf(`crawl-${i}`, await storedDocuments(deps, crawlId)));
    });
    await unlessStopped(Promise.all([...pages, ...crawls]), signal);

    const steps = names.map((n) => record.steps.get(n) as StepResult);
    const merged = mergeResults(steps.flatMap((s) => s.results));
    const tokens = steps.reduce((n, s) => n + s.tokens, 0);
    const warning = [...new Set([...p.warnings, ...steps.flatMap((s) => s.warnings)])].slice(0, 20).join("; ");
    // charged before the job reads as completed (a caller who saw it completed sees its cost in the usage); the
    // ledger keeps the latest row of a job, so a resumed job that charges again does not count twice
    const charge = extractCharge(steps);
    await deps.authStore?.recordUsage([{ teamId, jobId: extractJobId(id), ...charge, at: deps.clock.now() }]);
    await end({ status: "completed", data: merged.data, ...(showSources ? { sources: merged.sources } : {}), tokensUsed: tokens, ...(warning ? { warning } : {}) });
    log.info({ pages: steps.reduce((n, s) => n + s.results.length, 0), tokens }, "extract completed");
    return "done";
  } catch (err) {
    if (err instanceof TrawlError && err.retriable) throw err; // store or bus down, or stopping: run again
    log.warn({ err: errorMessage(err) }, "extract failed");
    await end({ status: "failed", error: errorMessage(err), tokensUsed: 0 });
    return "done";
  }
}

async function waitForCrawl(deps: ExtractDeps, crawlId: string, signal: AbortSignal): Promise<void> {
  const deadline = deps.clock.now() + CRAWL_WAIT_MS;
  for (;;) {
    if (signal.aborted) throw interrupted();
    const crawl = await deps.store.getCrawl(crawlId);
    if (crawl && crawl.status !== "scraping") return;
    if (deps.clock.now() > deadline) throw new Error(`the crawl ${crawlId} did not finish within ${CRAWL_WAIT_MS / 60_000} minutes`);
    await sleep(1000, signal); // a crawl takes seconds; one status read a second per waiting job
  }
}

async function storedDocuments(deps: ExtractDeps, crawlId: string): Promise<PageDocument[]> {
  const out: PageDocument[] = [];
  for (let skip = 0; ; ) {
    const page = await deps.store.pageDocuments(crawlId, skip, 50 * 1024 * 1024, 1000);
    out.push(...page.docs.map((d) => JSON.parse(d) as PageDocument));
    if (!page.more || page.docs.length === 0) return out;
    skip = page.nextSkip;
  }
}
