// The peer: Crawlee's CheerioCrawler crawling the same site with the same scope, each page converted to markdown
// with turndown. Prints pages and pages/s. usage: node bench/crawlee-peer.ts <startUrl> <globPrefix>
import { CheerioCrawler, Configuration } from "@crawlee/cheerio";
import TurndownService from "turndown";

export async function crawleeRun(startUrl: string, prefix: string, maxRequests = 100_000): Promise<{ pages: number; seconds: number; pagesPerSecond: number; markdownMB: number }> {
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  let pages = 0;
  let markdownBytes = 0;
  const config = new Configuration({ persistStorage: false, logLevel: 2 });
  const crawler = new CheerioCrawler({
    maxRequestsPerCrawl: maxRequests,
    maxConcurrency: 16,
    async requestHandler({ $, enqueueLinks, body }) {
      markdownBytes += td.turndown(String(body)).length;
      pages++;
      void $;
      await enqueueLinks({ globs: [`${prefix}**`] });
    },
  }, config);
  const t0 = performance.now();
  await crawler.run([startUrl]);
  const seconds = (performance.now() - t0) / 1000;
  return { pages, seconds: +seconds.toFixed(2), pagesPerSecond: +(pages / seconds).toFixed(1), markdownMB: +(markdownBytes / 1e6).toFixed(1) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [start, prefix] = process.argv.slice(2);
  if (!start || !prefix) throw new Error("usage: crawlee-peer.ts <startUrl> <globPrefix>");
  console.log(JSON.stringify(await crawleeRun(start, prefix)));
}
