// Values every layer shares (api, stages, store, the composition root). Error codes live in errors.ts.

/** Results of a crawl or a scrape are served this long after it ended, then deleted. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** Prefix of the pseudo crawl id under which a single-page scrape's document is stored. */
export const SCRAPE_JOB_PREFIX = "scrape:";

/** The store id of a single-page scrape (GET /v2/scrape/:id reads it back). */
export const scrapeJobId = (scrapeId: string) => `${SCRAPE_JOB_PREFIX}${scrapeId}`;

export const isScrapeJob = (id: string) => id.startsWith(SCRAPE_JOB_PREFIX);
