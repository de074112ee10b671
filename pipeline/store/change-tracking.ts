// The changeTracking format (Firecrawl v2's shape): how a page's new scrape compares with the previous snapshot of the
// same URL in the same history (team + tag). Pure: the sink and the single-page scrape call it with what the
// SnapshotStore gave them, and store what it returns.
import { createHash } from "node:crypto";
import { markdownDiff, type MarkdownDiff } from "./snapshot-diff.ts";

export type ChangeStatus = "new" | "same" | "changed" | "removed";
export type ChangeMode = "git-diff" | "json";

export interface ChangeTracking {
  /** when the previous snapshot was taken (ISO 8601), null for a page never seen before */
  previousScrapeAt: string | null;
  changeStatus: ChangeStatus;
  visibility: "visible" | "hidden";
  diff?: MarkdownDiff;
  /** json mode: the json format's fields whose value changed, with their previous and current values */
  json?: Record<string, { previous: unknown; current: unknown }>;
}

/** Counts of a job's pages by change status: crawl.completed's `changeTracking` summary. */
export type ChangeCounts = Record<ChangeStatus, number>;

/** What a comparison needs of the previous snapshot. */
export interface PreviousScrape {
  scrapedAt: number;
  markdown: string;
  json?: unknown;
  /** a tombstone: the page was reported removed; it comes back as new */
  removed?: boolean;
}

/** Markdown compared without whitespace and without iframe links (Firecrawl's rule, without its sorting of characters). */
function comparable(markdown: string): string {
  return markdown.replace(/\[iframe\]\(.+?\)/g, "").replace(/\s+/g, "");
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Firecrawl's field-by-field comparison: every top-level field present on either side whose JSON differs. */
export function compareJson(previous: unknown, current: unknown): Record<string, { previous: unknown; current: unknown }> {
  const p = isObject(previous) ? previous : {};
  const c = isObject(current) ? current : {};
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  for (const key of new Set([...Object.keys(p), ...Object.keys(c)])) {
    if (JSON.stringify(p[key]) !== JSON.stringify(c[key])) out[key] = { previous: p[key] ?? null, current: c[key] ?? null };
  }
  return out;
}

export interface CurrentScrape {
  markdown: string;
  json?: unknown;
  statusCode: number;
}

/** The changeTracking of a page scraped now, against its previous snapshot (null: none). */
export function compareScrape(previous: PreviousScrape | null, current: CurrentScrape, modes: ChangeMode[]): ChangeTracking {
  const gone = current.statusCode === 404 || current.statusCode === 410;
  if (!previous || previous.removed) {
    return { previousScrapeAt: previous ? new Date(previous.scrapedAt).toISOString() : null, changeStatus: gone ? "removed" : "new", visibility: "visible" };
  }
  const fields = modes.includes("json") ? compareJson(previous.json, current.json) : {};
  const textChanged = comparable(previous.markdown) !== comparable(current.markdown);
  const changed = textChanged || Object.keys(fields).length > 0;
  const out: ChangeTracking = {
    previousScrapeAt: new Date(previous.scrapedAt).toISOString(),
    changeStatus: gone ? "removed" : changed ? "changed" : "same",
    visibility: "visible",
  };
  if (!changed) return out;
  if (modes.includes("git-diff")) {
    const diff = markdownDiff(previous.markdown, current.markdown);
    if (diff) out.diff = diff;
  }
  if (modes.includes("json")) out.json = fields;
  return out;
}

/** A page of the previous crawl that this crawl no longer reached. */
export function removedPage(previous: PreviousScrape): ChangeTracking {
  return { previousScrapeAt: new Date(previous.scrapedAt).toISOString(), changeStatus: "removed", visibility: "hidden" };
}

/** The content hash kept with a snapshot: equal hashes mean an identical fetched body. */
export function contentHash(body: string | Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** What makes two scrapes of one body give the same document: a stored document is reused only under equal options. */
export function optionsHash(options: unknown): string {
  return createHash("sha256").update(JSON.stringify(options)).digest("hex").slice(0, 32);
}
