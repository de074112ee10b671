// POST /v2/extract as a job: pages are scraped (a URL ending in `/*` is a crawl of that path, run by the pipeline) or
// read back from a finished crawl (crawlId: no fetch), each page's json is extracted with the configured provider,
// and the results are merged into one answer. The job's state is stored as documents of the pseudo crawl
// `extract:<id>` (one per state change), so that any API replica answers GET /v2/extract/:id.
import { randomUUID } from "node:crypto";
import type { ExtractRequest, PageDocument } from "../../schemas/index.ts";
import { extractInto } from "../extract-json/extract-page.ts";
import { htmlOfDocument } from "../extract-json/from-document.ts";
import type { JsonSchema } from "../extract-json/json-schema.ts";
import { mergeResults, type PageResult } from "../extract-json/merge.ts";
import { extractJobId, RETENTION_MS } from "../runtime/constants.ts";
import { errorMessage, invalidField } from "../runtime/errors.ts";
import { sleep } from "../runtime/retry.ts";
import { checkStartUrl } from "../url/start-url.ts";
import { crawlOptions, scrapeSettings } from "./request-options.ts";
import { scrapePage, type StoredScrapeDeps } from "./scrape-page.ts";
import { submitCrawl, type CrawlDeps } from "./submit-crawl.ts";
import { compileUserSchema, InvalidSchemaError } from "../extract-json/user-schema.ts";
import { rulesProvider } from "../extract-json/rules.ts";
import { JSON_FORMAT_CREDITS } from "../extract-json/extract-json.ts";
import type { AuthStore } from "../store/auth-store.ts";
import { documentTokens } from "../store/crawl-store.ts";
import type { TeamAccess } from "./team-access.ts";
import { parseHtml } from "../convert/parse-html.ts";

export type ExtractDeps = StoredScrapeDeps & CrawlDeps & { allowPrivate: boolean; fetchTimeoutMs: number; authStore?: Pick<AuthStore, "recordUsage">; access?: TeamAccess };

/**
 * What an extract job is charged: each page it extracts itself (scraped for the job, or read back from a finished
 * crawl) costs what a scrape with a json format costs (JSON_FORMAT_CREDITS), and the LLM tokens of those pages. Pages
 * of a `/*` wildcard are a crawl of the team with a json format, billed as such (credits and tokens on the crawl),
 * so they are not charged twice. A job that fails is not charged.
 */
export const extractCharge = (pages: PageDocument[]) => ({ credits: pages.length * JSON_FORMAT_CREDITS, tokens: pages.reduce((n, d) => n + documentTokens(d), 0) });

/** Credits a request needs to start (the anchor's rule: one per URL, and at least one), refused with 402 when missing. */
export const extractRequired = (req: ExtractRequest) => Math.max(1, (req.urls?.length ?? 0) + (req.crawlId !== undefined ? 1 : 0));

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
}

const WILDCARD = /\/\*$/;
const DEFAULT_WILDCARD_LIMIT = 50;
const CRAWL_WAIT_MS = 10 * 60_000;

interface Plan {
  pages: string[];
  crawls: string[];
  /** finished crawls whose stored pages are extracted again (crawlId, or `crawl:<id>` in urls) */
  stored: string[];
  warnings: string[];
  /** the limit of each wildcard's crawl */
  crawlLimit?: number;
}

const STORED = /^crawl:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** Checks the request (400s before any job exists) and splits its URLs into pages and path crawls. */
function plan(req: ExtractRequest, allowPrivate: boolean): Plan {
  if (req.enableWebSearch) throw invalidField(["enableWebSearch"], "enableWebSearch is not available on this server (it has no web search); pass the pages in urls");
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

async function save(deps: ExtractDeps, id: string, n: number, state: ExtractState): Promise<void> {
  await deps.store.insertDocuments([{
    crawlId: extractJobId(id), seq: n, urlKey: `state-${n}`, finalKey: `state-${n}`, scrapeId: id, url: "", statusCode: 200, credits: 0,
    storedAt: deps.clock.now(), doc: JSON.stringify(state),
  }]);
}

/** The job's latest state, or undefined when there is no such job. */
export async function readExtract(deps: Pick<ExtractDeps, "store">, teamId: string, id: string): Promise<ExtractState | undefined> {
  const page = await deps.store.pageDocuments(extractJobId(id), 0, Number.MAX_SAFE_INTEGER, 10);
  const last = page.docs.at(-1);
  const state = last === undefined ? undefined : (JSON.parse(last) as ExtractState);
  return state && state.teamId === teamId ? state : undefined;
}

/** Validates, stores the job as processing, and runs it in the background. Returns the job id. */
export async function startExtract(deps: ExtractDeps, req: ExtractRequest, teamId: string): Promise<string> {
  const p = plan(req, deps.allowPrivate);
  // a wildcard's crawl is lowered to the credits left, as a crawl's limit is
  const limit = await deps.access?.admit(teamId, extractRequired(req), p.crawls.length ? (req.limit ?? DEFAULT_WILDCARD_LIMIT) : undefined);
  if (limit !== undefined) p.crawlLimit = limit;
  for (const crawlId of p.stored) {
    const crawl = await deps.store.getCrawl(crawlId);
    if (!crawl || crawl.teamId !== teamId) throw invalidField(["crawlId"], `no crawl ${crawlId}`);
    if (crawl.status === "scraping") throw invalidField(["crawlId"], `crawl ${crawlId} is still running; extract again once it has finished`);
  }
  const id = randomUUID();
  const showSources = req.showSources === true;
  await save(deps, id, 0, { status: "processing", tokensUsed: 0, expiresAt: deps.clock.now() + RETENTION_MS, showSources, teamId });
  const log = deps.log.child({ extractId: id });
  void run(deps, req, p, teamId).then(
    async (result) => {
      const warning = [...p.warnings, ...result.warnings].join("; ");
      // charged before the job reads as completed: a caller who saw it completed sees its cost in the usage
      await deps.authStore?.recordUsage([{ teamId, jobId: extractJobId(id), ...result.charge, at: deps.clock.now() }]);
      await save(deps, id, 1, { status: "completed", data: result.data, ...(showSources ? { sources: result.sources } : {}), tokensUsed: result.tokens, expiresAt: deps.clock.now() + RETENTION_MS, showSources, teamId, ...(warning ? { warning } : {}) });
      log.info({ pages: result.pages, tokens: result.tokens, credits: result.charge.credits }, "extract completed");
    },
    async (err: unknown) => {
      log.warn({ err: errorMessage(err) }, "extract failed");
      await save(deps, id, 1, { status: "failed", error: errorMessage(err), tokensUsed: 0, expiresAt: deps.clock.now() + RETENTION_MS, showSources, teamId }).catch((e) => log.error({ err: e }, "could not store the failed extract"));
    },
  );
  return id;
}

interface RunResult {
  data: unknown;
  sources: Record<string, unknown>;
  tokens: number;
  warnings: string[];
  pages: number;
  charge: { credits: number; tokens: number };
}

async function run(deps: ExtractDeps, req: ExtractRequest, p: Plan, teamId: string): Promise<RunResult> {
  const json = { ...(req.schema ? { schema: req.schema as JsonSchema } : {}), ...(req.prompt ? { prompt: req.prompt } : {}) };
  const docs: PageDocument[] = [];
  const warnings: string[] = [];
  for (const crawlId of p.stored) {
    // again from the stored pages: no fetch
    const provider = deps.extractor ?? rulesProvider(parseHtml);
    const stored = await storedDocuments(deps, crawlId);
    for (const doc of stored) {
      await extractInto(doc, { url: String(doc.metadata.url), html: htmlOfDocument(doc), markdown: doc.markdown ?? "" }, { json }, provider, deps.log);
      docs.push(doc);
    }
    if (stored.length === 0) warnings.push(`crawl ${crawlId} has no stored pages`);
  }
  const settings = scrapeSettings({ ...(req.scrapeOptions ?? {}), formats: ["markdown", { type: "json", ...json }] }, ["scrapeOptions"]);
  const scraped = await Promise.allSettled(p.pages.map((url) => scrapePage(deps, url, settings, settings.timeoutMs ?? deps.fetchTimeoutMs)));
  scraped.forEach((r, i) => (r.status === "fulfilled" ? docs.push(r.value.document) : warnings.push(`${p.pages[i]}: ${errorMessage(r.reason)}`)));
  const charge = extractCharge(docs);
  for (const url of p.crawls) {
    const options = crawlOptions({ url, limit: p.crawlLimit ?? req.limit ?? DEFAULT_WILDCARD_LIMIT, ...(req.allowExternalLinks ? { allowExternalLinks: true } : {}), ...(req.includeSubdomains ? { allowSubdomains: true } : {}), ...(req.ignoreSitemap ? { sitemap: "skip" as const } : {}), scrapeOptions: { ...(req.scrapeOptions ?? {}), formats: ["markdown", { type: "json", ...json }] } }, DEFAULT_WILDCARD_LIMIT);
    const crawlId = await submitCrawl(deps, { url, options, teamId, webhook: "" });
    await waitForCrawl(deps, crawlId);
    docs.push(...(await storedDocuments(deps, crawlId)));
  }
  const results: PageResult[] = docs.map((d) => ({ url: String(d.metadata.url), data: d.json, sources: ((d.metadata.extract as { sources?: Record<string, unknown> } | undefined)?.sources ?? {}) }));
  for (const d of docs) if (d.warning) warnings.push(`${String(d.metadata.url)}: ${String(d.warning)}`);
  const tokens = docs.reduce((n, d) => n + documentTokens(d), 0);
  const merged = mergeResults(results);
  return { data: merged.data, sources: merged.sources, tokens, warnings: [...new Set(warnings)].slice(0, 20), pages: docs.length, charge };
}

async function waitForCrawl(deps: ExtractDeps, crawlId: string): Promise<void> {
  const deadline = deps.clock.now() + CRAWL_WAIT_MS;
  for (;;) {
    const crawl = await deps.store.getCrawl(crawlId);
    if (crawl && crawl.status !== "scraping") return;
    if (deps.clock.now() > deadline) throw new Error(`the crawl ${crawlId} did not finish within ${CRAWL_WAIT_MS / 60_000} minutes`);
    await sleep(300);
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
