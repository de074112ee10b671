// `trawl scrape <url>`: fetches and converts one page and prints its document as JSON.
import type { CrawlOptions } from "../../schemas/index.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { errorCode, errorMessage } from "../../pipeline/runtime/errors.ts";
import { scrapePage } from "../../pipeline/usecases/scrape-page.ts";
import { commandArgs } from "./args.ts";
import { pageFetcher } from "../ports.ts";
import { pageConverter } from "../../pipeline/convert/converter.ts";

export const SCRAPE_HELP = `usage: trawl scrape <url> [--format markdown|html|rawHtml|links ...] [--all-content]

Fetches one page and prints its document (the same JSON as a crawl's data[] entries) to standard output.`;

export async function scrapeCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = commandArgs(argv, { format: { type: "string", multiple: true }, "all-content": { type: "boolean" } }, SCRAPE_HELP);
  if ("exit" in args) return args.exit;
  const values = args.values as { format?: string[]; "all-content"?: boolean };
  let url: string;
  let config;
  try {
    config = loadConfig(env);
    url = checkStartUrl(args.url, config.allowPrivateCrawlTargets);
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const formats = (values.format?.length ? values.format : ["markdown"]) as CrawlOptions["formats"];
  const fetcher = pageFetcher(config);
  try {
    const { document } = await scrapePage({ fetcher, convert: pageConverter(null) }, url, { formats, onlyMainContent: !values["all-content"] }, config.fetchTimeoutMs);
    process.stdout.write(JSON.stringify(document, null, 2) + "\n");
    if (document.metadata.error !== undefined) {
      console.error(`SCRAPE_HTTP_STATUS: ${String(document.metadata.error)}`);
      return 1;
    }
    return 0;
  } catch (err) {
    console.error(`${errorCode(err)}: ${errorMessage(err)}`);
    return 1;
  } finally {
    await fetcher.close();
  }
}
