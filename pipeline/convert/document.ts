// The use case shared by the convert stage and (later) the single-page scrape: a fetched page -> a document + links.
import type { DefaultTreeAdapterMap } from "parse5";
import type { CrawlOptions, PageDocument, PageExtract } from "../../schemas/index.ts";
import { attributeValues } from "./attributes.ts";
import { processHtml } from "./html.ts";
import { renderMarkdown } from "./render-markdown.ts";
import { pdfToMarkdown } from "./pdf.ts";
import { STATUS_CODES } from "node:http";
import { PageError } from "../runtime/errors.ts";

export interface FetchedPage {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  body: string;
  /** PDFs and DOCX files: the file's bytes */
  bytes?: Uint8Array;
  scrapeId: string;
  /** set when the page cache was consulted (maxAge > 0) */
  cacheState?: "hit" | "miss";
  /** a cache hit: when the response was fetched (ms) */
  cachedAt?: number;
  /** what produced body (metadata.engine) */
  engine?: "fetch" | "chromium";
  /** the browser's artefacts and notes, copied to the document as they are */
  screenshot?: string;
  branding?: object;
  actions?: object;
  warning?: string;
}

export interface Converted {
  document: PageDocument;
  links: string[];
  credits: number;
  /** json / summary formats without markdown: the markdown extraction reads (not part of the document) */
  extractMarkdown?: string;
  /** what the page analyzer made of the parsed page (plain data), when one was given and had something to say */
  analysis?: Record<string, unknown>;
}

/**
 * Runs on the parsed tree of an HTML page before it is cleaned, in the thread that converts the page (a convert
 * worker: under its time limit, off the event loop), so that a later stage need not parse the page again. Returns
 * plain data (it crosses threads and topics), or undefined when it has nothing to say for these options. The
 * composition root chooses it (the rules provider of the json format, pipeline/extract-json/rules-analyzer.ts);
 * convert knows nothing of what it does.
 */
export type PageAnalyzer = (doc: DefaultTreeAdapterMap["parentNode"], options: ConvertOptions) => Record<string, unknown> | undefined;

/** The formats that need the extract-json stage. */
export const wantsExtraction = (formats: readonly string[]): boolean => formats.some((f) => f === "json" || f === "summary" || f === "question" || f === "highlights");

/** What a page's extraction formats ask of the extract-json step, from the page's options. */
export function extractSpec(options: Pick<CrawlOptions, "formats" | "json" | "question" | "highlightsQuery">): PageExtract["extract"] {
  const f = options.formats;
  return {
    ...(f.includes("json") ? { json: options.json ?? {} } : {}),
    ...(f.includes("summary") ? { summary: true } : {}),
    ...(f.includes("question") && options.question ? { question: options.question } : {}),
    ...(f.includes("highlights") && options.highlightsQuery ? { highlights: options.highlightsQuery } : {}),
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));

type PageOptions = Pick<CrawlOptions, "formats" | "onlyMainContent" | "includeTags" | "excludeTags" | "removeBase64Images" | "json" | "attributes">;

export function convertPage(page: FetchedPage, options: PageOptions, analyze?: PageAnalyzer): Converted {
  const isHtml = /html|xml/i.test(page.contentType) && !/^application\/(json|ld\+json)/i.test(page.contentType);
  let metadata: Record<string, unknown> = {};
  let links: string[] = [];
  let images: () => string[] = () => [];
  let html: () => string;
  let markdown: () => string;
  const formats = new Set(options.formats);
  let analysis: Record<string, unknown> | undefined;
  // not an HTML page: every selector matches nothing
  let attributes = options.attributes?.map((a) => ({ ...a, values: [] as string[] }));
  if (isHtml) {
    const beforeClean = (doc: DefaultTreeAdapterMap["parentNode"]) => {
      if (analyze) analysis = analyze(doc, options);
      if (options.attributes && formats.has("attributes")) attributes = attributeValues(doc, options.attributes);
    };
    const extract = processHtml(page.body, page.finalUrl, options, "fast", beforeClean);
    metadata = extract.metadata;
    links = extract.links;
    images = extract.images;
    html = extract.html;
    markdown = () => renderMarkdown(extract.root);
  } else if (/json/i.test(page.contentType)) {
    html = () => `<pre>${escapeHtml(page.body)}</pre>`;
    markdown = () => "```json\n" + page.body + "\n```";
  } else {
    html = () => `<pre>${escapeHtml(page.body)}</pre>`;
    markdown = () => page.body;
  }
  const document: PageDocument = {
    metadata: {
      ...metadata,
      sourceURL: page.url,
      url: page.finalUrl,
      statusCode: page.statusCode,
      contentType: page.contentType,
      scrapeId: page.scrapeId,
      creditsUsed: 1,
    },
  };
  // markdown first: html() serialises the same tree
  if (formats.has("markdown")) document.markdown = markdown();
  if (formats.has("html")) document.html = html();
  if (formats.has("rawHtml")) document.rawHtml = page.body;
  if (formats.has("links")) document.links = links;
  if (formats.has("images")) document.images = images();
  if (formats.has("attributes") && attributes) document.attributes = attributes;
  const extractMarkdown = wantsExtraction(options.formats) && document.markdown === undefined ? markdown() : undefined;
  return { document, links, credits: 1, ...(extractMarkdown !== undefined ? { extractMarkdown } : {}), ...(analysis !== undefined ? { analysis } : {}) };
}

/**
 * A PDF: its text as markdown, 1 credit per page parsed (`pdf.maxPages` caps both), or with `pdf.parse` false the
 * file as base64 for a flat 1 credit.
 */
export async function convertPdf(page: FetchedPage & { bytes: Uint8Array }, options: Pick<CrawlOptions, "formats" | "pdf">): Promise<Converted> {
  const meta = { sourceURL: page.url, url: page.finalUrl, statusCode: page.statusCode, contentType: page.contentType, scrapeId: page.scrapeId };
  if (options.pdf && !options.pdf.parse) {
    const document: PageDocument = { markdown: Buffer.from(page.bytes).toString("base64"), metadata: { ...meta, creditsUsed: 1 } };
    return { document, links: [], credits: 1 };
  }
  const creditPages = options.pdf?.creditPages ?? Infinity; // authentication on: the pages the job's credits pay for
  const cap = Math.min(options.pdf?.maxPages ?? Infinity, creditPages);
  const text = await pdfToMarkdown(page.bytes, cap < Infinity ? cap : undefined);
  const credits = Math.max(1, text.parsedPages);
  const document: PageDocument = { metadata: { ...(text.title ? { title: text.title } : {}), ...meta, numPages: text.numPages, creditsUsed: credits } };
  if (text.parsedPages < text.numPages && text.parsedPages >= creditPages) {
    document.warning = `PDF parsed up to page ${text.parsedPages} of ${text.numPages}: the team's credits left pay for ${creditPages} page${creditPages === 1 ? "" : "s"} (1 credit a page)`;
  }
  const formats = new Set(options.formats);
  if (formats.has("markdown")) document.markdown = text.markdown;
  if (formats.has("html")) document.html = `<pre>${escapeHtml(text.markdown)}</pre>`;
  if (formats.has("links")) document.links = [];
  return { document, links: [], credits, ...(wantsExtraction(options.formats) && !formats.has("markdown") ? { extractMarkdown: text.markdown } : {}) };
}

/** Firecrawl's price of a lockdown scrape served from the cache: 4 credits on top of the page's own. */
export const LOCKDOWN_CREDITS = 4;

/** A lockdown page (always a cache hit) costs LOCKDOWN_CREDITS more; the document says what it cost. */
export function addLockdownCredits(converted: Converted, options: Pick<CrawlOptions, "lockdown">): void {
  if (!options.lockdown) return;
  converted.credits += LOCKDOWN_CREDITS;
  converted.document.metadata.creditsUsed = converted.credits;
}

/** The options that shape a document. */
export type ConvertOptions = PageOptions & Pick<CrawlOptions, "pdf">;

/** A PDF (its bytes fetched) is converted asynchronously (pdfjs awaits); every other page synchronously. */
export function isPdfPage(page: FetchedPage): page is FetchedPage & { bytes: Uint8Array } {
  return page.bytes !== undefined && page.contentType === "application/pdf";
}

export const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

/** A DOCX file (an upload: its bytes), converted to HTML by mammoth, then as an HTML page. */
export function isDocxPage(page: FetchedPage): page is FetchedPage & { bytes: Uint8Array } {
  return page.bytes !== undefined && page.contentType === DOCX_TYPE;
}

/**
 * Heap bytes mammoth needs per byte of a DOCX's XML, for a document of ordinary shape (paragraphs of runs of a few words
 * with their properties): 20 MiB of such XML converted in a worker of 1,024 MB, 40 MiB did not. XML denser in elements
 * (one per character) needs ~5 times more and fails with SCRAPE_CONVERT_OUT_OF_MEMORY within the budget.
 */
const DOCX_HEAP_PER_XML_BYTE = 48;

/**
 * What a DOCX's entries may inflate to when it converts in a worker of `heapMb` (CONVERT_WORKER_HEAP_MB): past it
 * the file is refused (SCRAPE_TOO_LARGE) before mammoth reads it. In-line conversion (no pool): as in a worker of
 * the default 1,024 MB (~21 MiB).
 */
export const docxBudgetBytes = (heapMb = 1024): number => Math.floor((heapMb * 1024 * 1024) / DOCX_HEAP_PER_XML_BYTE);

/** Pages converted asynchronously (a pool posts nothing behind them: see worker-pool.ts). */
export const isAsyncPage = (page: FetchedPage): boolean => isPdfPage(page) || isDocxPage(page);

/**
 * A DOCX: mammoth's HTML through the HTML path, its warnings in the document's. mammoth is loaded with the first DOCX
 * (a worker that never sees one does not load it). A file that is not a DOCX, or whose zip inflates past its budget,
 * fails as unparseable or too large (a 400 on /v2/parse).
 */
async function convertDocx(page: FetchedPage & { bytes: Uint8Array }, options: ConvertOptions, analyze?: PageAnalyzer, heapMb?: number): Promise<Converted> {
  const { DocxError, docxToHtml } = await import("./docx.ts");
  let html: string;
  let warnings: string[];
  try {
    ({ html, warnings } = await docxToHtml(Buffer.from(page.bytes.buffer, page.bytes.byteOffset, page.bytes.byteLength), docxBudgetBytes(heapMb)));
  } catch (err) {
    if (!(err instanceof DocxError)) throw err;
    throw new PageError(/inflates to more than/.test(err.message) ? "SCRAPE_TOO_LARGE" : "SCRAPE_UNPARSEABLE", err.message, { cause: err });
  }
  const { bytes: _bytes, ...rest } = page;
  const converted = convertPage({ ...rest, contentType: "text/html; charset=utf-8", body: html }, options, analyze);
  if (warnings.length > 0) {
    const note = `DOCX conversion: ${warnings.slice(0, 5).join("; ")}${warnings.length > 5 ? ` (+${warnings.length - 5} more)` : ""}`;
    converted.document.warning = converted.document.warning ? `${String(converted.document.warning)} ${note}` : note;
  }
  return converted;
}

/**
 * Any fetched page: PDFs through pdfjs, DOCX files through mammoth, the rest through the HTML path; the page cache's
 * verdict in metadata. heapMb: the heap limit of the worker converting it (sizes the DOCX budget).
 */
export async function convertAny(page: FetchedPage, options: ConvertOptions, analyze?: PageAnalyzer, heapMb?: number): Promise<Converted> {
  const converted = isPdfPage(page) ? await convertPdf(page, options) : isDocxPage(page) ? await convertDocx(page, options, analyze, heapMb) : convertPage(page, options, analyze);
  if (page.cacheState) {
    converted.document.metadata.cacheState = page.cacheState;
    if (page.cachedAt !== undefined) converted.document.metadata.cachedAt = new Date(page.cachedAt).toISOString();
  }
  return converted;
}

/** A page answered with an HTTP error status is still a document (a scrape's or a batch's), saying so in metadata. */
export function markHttpError(converted: Converted, statusCode: number): Converted {
  if (statusCode >= 400) converted.document.metadata.error = `HTTP ${statusCode}${STATUS_CODES[statusCode] ? ` ${STATUS_CODES[statusCode]}` : ""}`;
  return converted;
}
