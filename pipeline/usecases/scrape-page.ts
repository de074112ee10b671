// The fetch → convert → document use case for one page, shared by the CLI (`trawl scrape`) and, later, POST /v2/scrape.
// The crawl stages run the same two functions (Fetcher.fetch in fetch-render, convertPage in convert).
import { randomUUID } from "node:crypto";
import type { CrawlOptions } from "../../schemas/index.ts";
import { convertAny, type Converted } from "../convert/document.ts";
import type { Fetcher } from "../fetch-render/fetcher.ts";

export async function scrapePage(fetcher: Fetcher, url: string, options: Pick<CrawlOptions, "formats" | "onlyMainContent" | "headers" | "pdf" | "includeTags" | "excludeTags" | "removeBase64Images">, timeoutMs: number): Promise<Converted> {
  const fetched = await fetcher.fetch({ url, timeoutMs, headers: options.headers });
  return convertAny({ ...fetched, scrapeId: randomUUID() }, options);
}
