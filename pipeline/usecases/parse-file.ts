// POST /v2/parse: an uploaded file (PDF, DOCX or HTML) through the same conversion and formats as a scrape, with no
// fetch. The file's kind comes from its name, then its content type, then its first bytes; kinds Firecrawl parses
// and Trawl does not (.doc, .odt, .rtf, .xlsx, .xls) and unknown kinds are refused by name (HTTP 415).
import { randomUUID } from "node:crypto";
import { DOCX_TYPE, type Converted, type FetchedPage } from "../convert/document.ts";
import { decodeBody } from "../fetch-render/charset.ts";
import { invalidField, PageError } from "../runtime/errors.ts";
import { scrapePage, type ScrapeDeps, type ScrapeOptions } from "./scrape-page.ts";

export type FileKind = "pdf" | "docx" | "html";

const BY_EXTENSION: Record<string, FileKind> = { pdf: "pdf", docx: "docx", html: "html", htm: "html", xhtml: "html" };
const BY_TYPE: Record<string, FileKind> = { "application/pdf": "pdf", [DOCX_TYPE]: "docx", "text/html": "html", "application/xhtml+xml": "html" };
/** Kinds Firecrawl's /parse takes that this server does not convert. */
const NOT_HERE = ["doc", "odt", "rtf", "xlsx", "xls"];

export const SUPPORTED_FILES = ".pdf, .docx, .html, .htm";

/** An upload this server cannot convert (HTTP 415). */
export class UnsupportedFileError extends Error {}

export interface UploadedFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export function fileKind(file: UploadedFile): FileKind {
  const ext = /\.([a-z0-9]+)$/i.exec(file.filename)?.[1]?.toLowerCase() ?? "";
  if (BY_EXTENSION[ext]) return BY_EXTENSION[ext];
  if (NOT_HERE.includes(ext)) throw new UnsupportedFileError(`.${ext} files are not converted by this server (supported: ${SUPPORTED_FILES})`);
  const type = file.contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  if (BY_TYPE[type]) return BY_TYPE[type];
  const head = file.bytes.subarray(0, 512).toString("latin1");
  if (head.startsWith("%PDF-")) return "pdf";
  if (/^\s*(<!doctype html|<html)/i.test(head)) return "html";
  throw new UnsupportedFileError(`cannot tell what kind of file "${file.filename}" is (${type || "no content type"}); supported: ${SUPPORTED_FILES}`);
}

/**
 * The uploaded file as a document, billed as a scrape (a PDF by its pages). `metadata.sourceFile` names the file.
 * Every kind converts through deps.convert: in the convert workers' pool (off the event loop, under the time and heap
 * limits of a worker) when the process has one.
 */
export async function parseFile(deps: ScrapeDeps, file: UploadedFile, options: ScrapeOptions, timeoutMs: number): Promise<Converted> {
  const kind = fileKind(file);
  const url = `file:///${encodeURIComponent(file.filename)}`;
  const page: FetchedPage = { url, finalUrl: url, statusCode: 200, contentType: "text/html; charset=utf-8", body: "", scrapeId: randomUUID() };
  if (kind === "pdf") Object.assign(page, { contentType: "application/pdf", bytes: file.bytes });
  else if (kind === "docx") Object.assign(page, { contentType: DOCX_TYPE, bytes: file.bytes });
  else page.body = decodeBody(file.bytes, file.contentType);
  let converted: Converted;
  try {
    converted = await scrapePage(deps, url, options, timeoutMs, { fetched: page });
  } catch (err) {
    // a file pdfjs, mammoth (or the HTML path) cannot read is the caller's input, not a server failure
    if (err instanceof PageError && (err.code === "SCRAPE_UNPARSEABLE" || err.code === "SCRAPE_TOO_LARGE")) throw invalidField(["file"], `cannot convert "${file.filename}": ${err.message}`);
    throw err;
  }
  converted.document.metadata.sourceFile = file.filename;
  return converted;
}
