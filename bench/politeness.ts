// Politeness on a rate-limited host (issue 34's goal: no more 429s than Crawlee's). The PostgreSQL manual is served by
// a host that answers 429 (`Retry-After: 1`) past <inFlight> requests at once and takes <delayMs> for each page it
// serves; Crawlee (the peer's settings: CheerioCrawler, 16 concurrent requests) and Trawl embedded with the defaults of
// `npm start` crawl it one after the other. Reported for each: the host's answers by status, pages stored, pages/s.
// usage: node bench/politeness.ts [inFlight:delayMs]   (default 6:20)
import { crawleeRun } from "./crawlee-peer.ts";
import { ensurePostgresManual, serveDirectory, siteLimitFrom } from "./corpus.ts";
import { e2e } from "./e2e.ts";

const spec = process.argv[2] ?? "6:20";
const limit = siteLimitFrom(spec) as NonNullable<ReturnType<typeof siteLimitFrom>>;

const site = await serveDirectory(ensurePostgresManual(), { limit });
process.env.CRAWLEE_LOG_LEVEL = "OFF";
const peer = await crawleeRun(`${site.origin}/docs/index.html`, `${site.origin}/docs/`);
const crawlee = { ...peer, siteAnswers: { ...site.answered } };
await site.close();

process.env.BENCH_SITE_LIMIT = spec;
const { pages, pagesPerSecond, seconds, siteAnswers, status } = (await e2e("embedded", "pg")) as Record<string, unknown>;
const trawl = { pages, pagesPerSecond, seconds, status, siteAnswers };

const tooMany = (x: { siteAnswers?: unknown }) => Number((x.siteAnswers as Record<string, number> | undefined)?.["429"] ?? 0);
console.log(JSON.stringify({ limit, crawlee, trawl, trawl429: tooMany(trawl), crawlee429: tooMany(crawlee) }));
