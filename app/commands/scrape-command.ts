// `trawl scrape <url>`: fetches (and, when the page needs it, renders) and converts one page and prints its document
// as JSON. RENDER applies as in the service: auto renders script-built pages and requests that need a browser when
// Chromium is present; screenshots are data URLs (there is no server to serve them).
import type { ScrapeOptions as ScrapeBody } from "../../schemas/index.ts";
import { checkStartUrl } from "../../pipeline/url/start-url.ts";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { errorCode, errorMessage } from "../../pipeline/runtime/errors.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { scrapePage } from "../../pipeline/usecases/scrape-page.ts";
import { scrapeSettings } from "../../pipeline/usecases/request-options.ts";
import type { RenderMode } from "../../pipeline/browser/needs-render.ts";
import { commandArgs } from "./args.ts";
import { pageFetcher, pageRenderer } from "../ports.ts";
import { pageConverter } from "../../pipeline/convert/converter.ts";

export const SCRAPE_HELP = `usage: trawl scrape <url> [--format markdown|html|rawHtml|links|screenshot|screenshot@fullPage|branding ...] [--all-content]
                    [--wait-for <ms>] [--mobile]

Fetches one page and prints its document (the same JSON as a crawl's data[] entries) to standard output.
With RENDER=auto (the default) a script-built page, --wait-for, --mobile, screenshots and branding go through headless
Chromium (CHROMIUM_PATH) when it is installed; RENDER=never fetches statically only.`;

export async function scrapeCommand(argv: string[], env: Record<string, string | undefined>): Promise<number> {
  const args = commandArgs(argv, { format: { type: "string", multiple: true }, "all-content": { type: "boolean" }, "wait-for": { type: "string" }, mobile: { type: "boolean" } }, SCRAPE_HELP);
  if ("exit" in args) return args.exit;
  const values = args.values as { format?: string[]; "all-content"?: boolean; "wait-for"?: string; mobile?: boolean };
  let url: string;
  let config;
  let settings;
  try {
    config = loadConfig(env);
    url = checkStartUrl(args.url, config.allowPrivateCrawlTargets);
    const waitFor = values["wait-for"];
    if (waitFor !== undefined && !/^\d+$/.test(waitFor)) throw new Error(`--wait-for must be milliseconds (digits), not ${waitFor}`);
    const body = {
      formats: (values.format?.length ? values.format : ["markdown"]) as ScrapeBody["formats"], onlyMainContent: !values["all-content"],
      ...(waitFor !== undefined ? { waitFor: Number(waitFor) } : {}), ...(values.mobile ? { mobile: true } : {}),
    };
    settings = scrapeSettings(body, []);
  } catch (err) {
    console.error(errorMessage(err));
    return 2;
  }
  const log = createLogger(config.logLevel, { command: "scrape" }, 2);
  const fetcher = pageFetcher(config);
  const renderer = config.render === "never" ? undefined : pageRenderer(config, log);
  try {
    const deps = { fetcher, convert: pageConverter(null), renderMode: config.render as RenderMode, ...(renderer ? { renderer } : {}) };
    const { document } = await scrapePage(deps, url, settings, settings.timeoutMs ?? config.fetchTimeoutMs);
    process.stdout.write(JSON.stringify(document, null, 2) + "\n");
    if (document.warning) console.error(`warning: ${String(document.warning)}`);
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
    await renderer?.close();
  }
}
