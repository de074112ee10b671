// Values every layer shares (api, stages, store, the composition root). Error codes live in errors.ts.

/** Results of a crawl or a scrape are served this long after it ended, then deleted. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

/** Prefix of the pseudo crawl id under which a single-page scrape's document is stored. */
export const SCRAPE_JOB_PREFIX = "scrape:";

/** The team of every caller when authentication is off (the anchor's name). */
export const TEAM_BYPASS = "bypass";

/**
 * The store id of a single-page scrape (GET /v2/scrape/:id reads it back). It names the team, so another team's
 * scrape is not found; the "bypass" team (authentication off) keeps the id it always had.
 */
export const scrapeJobId = (teamId: string, scrapeId: string) => (teamId === TEAM_BYPASS ? `${SCRAPE_JOB_PREFIX}${scrapeId}` : `${SCRAPE_JOB_PREFIX}${teamId}:${scrapeId}`);

export const isScrapeJob = (id: string) => id.startsWith(SCRAPE_JOB_PREFIX);

/** Whether the pseudo crawl id of a scrape belongs to the team (the inverse of scrapeJobId). */
export const isTeamScrape = (teamId: string, id: string) =>
  teamId === TEAM_BYPASS ? id.startsWith(SCRAPE_JOB_PREFIX) && !id.includes(":", SCRAPE_JOB_PREFIX.length) : id.startsWith(`${SCRAPE_JOB_PREFIX}${teamId}:`);

/** Prefix of the pseudo crawl id under which a POST /v2/extract job's states are stored. */
export const EXTRACT_JOB_PREFIX = "extract:";

export const extractJobId = (id: string) => `${EXTRACT_JOB_PREFIX}${id}`;

/** Documents stored without a crawl record (scrapes, extract jobs): kept across restarts, deleted by age. */
export const isStandaloneJob = (id: string) => isScrapeJob(id) || id.startsWith(EXTRACT_JOB_PREFIX);
