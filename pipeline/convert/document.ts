// The use case shared by the convert stage and (later) the single-page scrape: a fetched page -> a document + links.
import type { CrawlOptions, PageDocument } from "../../schemas/index.ts";
import { processHtml } from "./html.ts";
import { createMarkdownConverter } from "./markdown.ts";

export interface FetchedPage {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  body: string;
  scrapeId: string;
}

export interface Converted {
  document: PageDocument;
  links: string[];
  credits: number;
}

const toMarkdown = createMarkdownConverter();

const escapeHtml = (s: string) => s.replace(/[&<>]/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : "&gt;"));

export function convertPage(page: FetchedPage, options: Pick<CrawlOptions, "formats" | "onlyMainContent">): Converted {
  const isHtml = /html|xml/i.test(page.contentType) && !/^application\/(json|ld\+json)/i.test(page.contentType);
  let metadata: Record<string, unknown> = {};
  let links: string[] = [];
  let html: string;
  let markdown: string;
  if (isHtml) {
    const extract = processHtml(page.body, page.finalUrl, { onlyMainContent: options.onlyMainContent });
    metadata = extract.metadata;
    links = extract.links;
    html = extract.html;
    markdown = toMarkdown(html);
  } else if (/json/i.test(page.contentType)) {
    html = `<pre>${escapeHtml(page.body)}</pre>`;
    markdown = "```json\n" + page.body + "\n```";
  } else {
    html = `<pre>${escapeHtml(page.body)}</pre>`;
    markdown = page.body;
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
  const formats = new Set(options.formats);
  if (formats.has("markdown")) document.markdown = markdown;
  if (formats.has("html")) document.html = html;
  if (formats.has("rawHtml")) document.rawHtml = page.body;
  if (formats.has("links")) document.links = links;
  return { document, links, credits: 1 };
}
