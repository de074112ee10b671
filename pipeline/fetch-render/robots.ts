// robots.txt: fetched once per origin and cached (shared by every crawl this worker runs), parsed with robots-parser.
import robotsParserModule from "robots-parser";
import type { Fetcher } from "./fetcher.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";

export interface Robots {
  isAllowed(url: string, userAgent: string): boolean;
  /** Crawl-delay of the user agent's group, in milliseconds (0: none) */
  crawlDelayMs(userAgent: string): number;
  sitemaps: string[];
  /** The line that decides for the URL (`line 3: Disallow: /private`), "" when none */
  rule?(url: string, userAgent: string): string;
  /** the fetch of this robots.txt as sent and received, for the web archives of the crawls that use it */
  exchanges?: HttpExchange[];
}

// the package is CommonJS (module.exports = fn) while its types declare a default export
const robotsParser = robotsParserModule as unknown as (url: string, body: string) => {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
  getMatchingLineNumber(url: string, ua?: string): number;
};

const ALLOW_ALL: Robots = { isAllowed: () => true, crawlDelayMs: () => 0, sitemaps: [] };
const MAX_ROBOTS_BYTES = 512 * 1024;
/** Largest robots.txt fetch (all its redirect hops) the cache keeps for web archives. */
const ROBOTS_ARCHIVE_MAX_BYTES = 32 * 1024;

/** Parses a robots.txt body; anything that is not plain text (HTML error pages, JSON, XML) counts as empty. */
export function parseRobots(url: string, body: string, contentType: string): Robots {
  const trimmed = body.trimStart();
  if (/html|json|xml/i.test(contentType) || trimmed.startsWith("<") || trimmed.startsWith("{")) return ALLOW_ALL;
  const parsed = robotsParser(url, body.slice(0, MAX_ROBOTS_BYTES));
  return {
    isAllowed: (u, ua) => parsed.isAllowed(u, ua) !== false,
    crawlDelayMs: (ua) => {
      const seconds = Number(parsed.getCrawlDelay(ua) ?? 0);
      return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
    },
    sitemaps: parsed.getSitemaps(),
    rule: (u, ua) => {
      const n = parsed.getMatchingLineNumber(u, ua);
      const line = n > 0 ? body.split(/\r?\n/)[n - 1]?.trim() : undefined;
      return line ? `line ${n}: ${line.slice(0, 200)}` : "";
    },
  };
}

export class RobotsCache {
  private readonly fetcher: Fetcher;
  private readonly ttlMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, { at: number; robots: Promise<Robots> }>();

  constructor(opts: { fetcher: Fetcher; ttlMs: number; timeoutMs: number; now: () => number }) {
    this.fetcher = opts.fetcher;
    this.ttlMs = opts.ttlMs;
    this.timeoutMs = opts.timeoutMs;
    this.now = opts.now;
  }

  /** The rules of the URL's origin. A robots.txt that cannot be fetched (4xx, 5xx, network) allows everything. */
  get(url: string): Promise<Robots> {
    const origin = new URL(url).origin;
    const hit = this.entries.get(origin);
    if (hit && this.now() - hit.at < this.ttlMs) return hit.robots;
    const robotsUrl = `${origin}/robots.txt`;
    // kept for web archives (warc: true) unless larger than ROBOTS_ARCHIVE_MAX_BYTES, which bounds what the cache's
    // 5,000 entries hold (a robots.txt is a few KB; one past the bound is not archived)
    const captured: HttpExchange[] = [];
    const exchanges = () => (captured.reduce((n, e) => n + e.payload.length, 0) <= ROBOTS_ARCHIVE_MAX_BYTES ? { exchanges: captured } : {});
    const robots = this.fetcher
      .fetch({ url: robotsUrl, timeoutMs: this.timeoutMs, raw: true, capture: (e) => captured.push(e) })
      .then((res) => ({ ...(res.statusCode >= 200 && res.statusCode < 300 ? parseRobots(robotsUrl, res.body, res.contentType) : ALLOW_ALL), ...exchanges() }))
      .catch(() => ({ ...ALLOW_ALL, ...exchanges() }));
    this.entries.set(origin, { at: this.now(), robots });
    if (this.entries.size > 5000) this.entries.delete(this.entries.keys().next().value as string);
    return robots;
  }
}
