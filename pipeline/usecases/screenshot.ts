// GET /v2/screenshots/<job>/<id>.<type>: a stored screenshot, for the team that owns its job (a crawl or batch while
// its results are served, or a stored scrape); anything else reads as missing.
import { scrapeJobId } from "../runtime/constants.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import type { Screenshot, ScreenshotStore } from "../store/screenshot-store.ts";
import { findCrawl } from "./crawl-status.ts";
import { readScrape } from "./scrape-page.ts";

export async function readScreenshot(deps: { store: CrawlStore; screenshots: ScreenshotStore }, teamId: string, jobId: string, id: string, now: number): Promise<Screenshot | null> {
  const crawl = await findCrawl(deps.store, jobId, teamId, now);
  if (crawl !== "missing") return crawl === "expired" ? null : deps.screenshots.get(jobId, id);
  if ((await readScrape(deps.store, teamId, jobId, now)) === undefined) return null;
  return deps.screenshots.get(scrapeJobId(teamId, jobId), id);
}
