// Generated from schemas/*.schema.json by `npm run schemas`. Do not edit.
/* eslint-disable */

/**
 * Bodies of the HTTP API without a schema file of their own (every response, the admin key request), one $defs entry each; the OpenAPI document's components.
 */
export interface ApiBodies {
  [k: string]: unknown;
}

/**
 * Webhook settings: a URL string or an object.
 */
export type Webhook =
  | string
  | {
      url: string;
      /**
       * HTTP header names are tokens (RFC 9110); values hold no CR, LF or NUL.
       */
      headers?: {
        [k: string]: string;
      };
      metadata?: {};
      events?: ("started" | "page" | "completed" | "failed" | "cancelled")[];
    };

/**
 * Body of POST /v2/batch/scrape: urls plus every scrape option at the top level, webhook and batch settings. Unknown keys are rejected.
 */
export interface BatchScrapeRequest {
  /**
   * The pages to scrape (at most 10,000 per request); each is checked like a scrape's url.
   *
   * @minItems 1
   * @maxItems 10000
   */
  urls: [string, ...string[]];
  /**
   * @maxItems 20
   */
  formats?: (
    | (
        | "markdown"
        | "html"
        | "rawHtml"
        | "links"
        | "images"
        | "json"
        | "summary"
        | "screenshot"
        | "screenshot@fullPage"
        | "changeTracking"
        | "branding"
      )
    | {
        type:
          | "markdown"
          | "html"
          | "rawHtml"
          | "links"
          | "images"
          | "json"
          | "summary"
          | "screenshot"
          | "attributes"
          | "question"
          | "highlights"
          | "branding"
          | "changeTracking";
        /**
         * question format: the question to answer about the page (document.answer)
         */
        question?: string;
        /**
         * highlights format: what to find in the page's text (document.highlights)
         */
        query?: string;
        /**
         * attributes format: for each CSS selector, the values of one attribute on every element of the page it matches
         *
         * @minItems 1
         * @maxItems 100
         */
        selectors?: [
          {
            selector: string;
            attribute: string;
          },
          ...{
            selector: string;
            attribute: string;
          }[]
        ];
        /**
         * json format: the JSON Schema of document.json (compiled with ajv at submit; an invalid schema is a 400)
         */
        schema?: {};
        /**
         * json format: instructions for the llm provider (the rules provider follows the schema only)
         */
        prompt?: string;
        fullPage?: boolean;
        quality?: number;
        viewport?: {
          width: number;
          height: number;
        };
        /**
         * changeTracking format: git-diff (a unified diff of the markdown) and/or json (the json fields compared with their previous values)
         *
         * @maxItems 2
         */
        modes?: ("git-diff" | "json")[];
        /**
         * changeTracking format: a separate history of the same URLs (default: none)
         */
        tag?: string | null;
      }
  )[];
  onlyMainContent?: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  /**
   * Request headers of the page fetch: names are HTTP tokens; values are Latin-1 text without CR, LF or NUL.
   */
  headers?: {
    [k: string]: string;
  };
  waitFor?: number;
  timeout?: number;
  mobile?: boolean;
  /**
   * @maxItems 50
   */
  actions?: BrowserAction[];
  parsers?: (
    | "pdf"
    | {
        type: "pdf";
        maxPages?: number;
        mode?: "fast" | "auto" | "ocr";
      }
  )[];
  skipTlsVerification?: boolean;
  removeBase64Images?: boolean;
  blockAds?: boolean;
  fastMode?: boolean;
  proxy?: "basic" | "stealth" | "auto" | "enhanced";
  maxAge?: number;
  storeInCache?: boolean;
  /**
   * Cache-only: the newest cached response of the page, when it is at least this old (ms); no fetch. A miss is 404 SCRAPE_NO_CACHED_DATA
   */
  minAge?: number;
  /**
   * Cache-only, never an outbound request (maxAge defaults to 2 years, capped by CACHE_MAX_AGE_MS); a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS; the result is not stored
   */
  lockdown?: boolean;
  location?: {
    country?: string;
    languages?: string[];
  };
  origin?: string;
  integration?: string | null;
  zeroDataRetention?: boolean;
  /**
   * Trawl extension: write the job's exchanges as web archives (WARC 1.1, gzip per record, with a CDXJ index), served at /v2/crawl/{id}/warc and /v2/crawl/{id}/cdxj (batch scrapes: /v2/batch/scrape/{id}/...). Default: the server's WARC_DEFAULT.
   */
  warc?: boolean;
  webhook?: Webhook;
  /**
   * Add these URLs to an existing batch scrape (not supported by this server: refused with 400).
   */
  appendToId?: string;
  /**
   * Skip invalid URLs (listed in invalidURLs) instead of refusing the request.
   */
  ignoreInvalidURLs?: boolean;
  maxConcurrency?: number;
}

/**
 * One browser action of a scrape (Firecrawl v2 `actions`); the fields each type needs are checked by the request mapping.
 */
export interface BrowserAction {
  type: "wait" | "click" | "write" | "press" | "scroll" | "screenshot" | "scrape" | "executeJavascript" | "pdf";
  milliseconds?: number;
  selector?: string;
  all?: boolean;
  text?: string;
  key?: string;
  direction?: "up" | "down";
  fullPage?: boolean;
  quality?: number;
  viewport?: {
    width: number;
    height: number;
  };
  script?: string;
  landscape?: boolean;
  scale?: number;
  format?: "A0" | "A1" | "A2" | "A3" | "A4" | "A5" | "A6" | "Letter" | "Legal" | "Tabloid" | "Ledger";
}

/**
 * document.branding (the branding format): the brand of the rendered page, read from its computed styles, as the official SDKs' BrandingProfile (the fields Trawl can fill from the page; the others are left out). Colours are #RRGGBB. Declared in the OpenAPI document's PageDocument, not in document.schema.json (the public topics' registered schemas must stay backward compatible).
 */
export interface Branding {
  /**
   * dark when the page background's relative luminance is below 0.179 (where white and black text contrast equally)
   */
  colorScheme: "light" | "dark";
  /**
   * og:site_name, else application-name, else the logo's alt text
   */
  brandName?: string;
  /**
   * an img or svg in the header or with "logo" in its class, id, alt or src (an svg as a data URL), else og:image, else the favicon
   */
  logo?: string | null;
  /**
   * the page's font families by amount of text set in them (generic families left out)
   */
  fonts: {
    family: string;
  }[];
  /**
   * primary: the most common coloured button background, else the link colour, else the most common coloured background or text; secondary and accent: the next coloured ones; textPrimary/textSecondary: the two most common text colours by amount of text; link: the most common link colour
   */
  colors: {
    primary?: string;
    secondary?: string;
    accent?: string;
    background?: string;
    textPrimary?: string;
    textSecondary?: string;
    link?: string;
  };
  typography: {
    fontFamilies?: {
      primary?: string;
      heading?: string;
      code?: string;
    };
    fontStacks?: {
      primary?: string[];
      heading?: string[];
      body?: string[];
      paragraph?: string[];
    };
    fontSizes?: {
      h1?: string;
      h2?: string;
      h3?: string;
      body?: string;
      small?: string;
    };
    lineHeights?: {
      heading?: number;
      body?: number;
    };
  };
  spacing?: {
    borderRadius?: string;
  };
  components?: {
    buttonPrimary?: {
      background?: string;
      textColor?: string;
      borderColor?: string;
      borderRadius?: string;
    };
    buttonSecondary?: {
      background?: string;
      textColor?: string;
      borderColor?: string;
      borderRadius?: string;
    };
  };
  images?: {
    logo?: string | null;
    favicon?: string | null;
    ogImage?: string | null;
  };
}

/**
 * document.changeTracking (the changeTracking format): this page against the previous scrape of its URL by the same team and tag. Declared in the OpenAPI document's PageDocument, not in document.schema.json (the public topics' registered schemas must stay backward compatible).
 */
export interface ChangeTracking {
  /**
   * when the page was last scraped in this history (ISO 8601); null: new
   */
  previousScrapeAt: string | null;
  changeStatus: "new" | "same" | "changed" | "removed";
  /**
   * hidden: a page of an earlier crawl that this crawl no longer reached
   */
  visibility: "visible" | "hidden";
  /**
   * git-diff mode: the unified diff of the markdown and its parsed form ({files: [{from, to, chunks: [{content, changes}]}]})
   */
  diff?: {
    text: string;
    json: {};
  };
  /**
   * json mode: the json fields that changed, each {previous, current}
   */
  json?: {
    [k: string]: {
      previous?: unknown;
      current?: unknown;
    };
  };
}

/**
 * Public topic crawl.changes: one record per new, changed or removed page of a job with the changeTracking format (none for same pages), keyed by crawlId, in order per job. A replay after a crash can repeat a record, never with other content: changeId identifies it.
 */
export interface CrawlChange {
  /**
   * <crawlId>|<urlKey>: unique per job and page; a repeated record (a replay) has the same changeId and the same content
   */
  changeId: string;
  /**
   * the crawl or batch scrape
   */
  crawlId: string;
  /**
   * the team that owns the job (authentication off: "bypass")
   */
  teamId: string;
  /**
   * the job's kind (absent: crawl)
   */
  kind?: "crawl" | "batch";
  url: string;
  /**
   * the page's key in its history (the normalised URL)
   */
  urlKey: string;
  /**
   * the changeTracking format's tag ("": none)
   */
  tag: string;
  changeStatus: "new" | "changed" | "removed";
  /**
   * hidden: a page of an earlier crawl that this crawl no longer reached (reported at the crawl's end)
   */
  visibility: "visible" | "hidden";
  /**
   * when the page was last scraped in this history (ISO 8601); null: new
   */
  previousScrapeAt: string | null;
  /**
   * epoch milliseconds: when the page was scraped, or its removal recorded
   */
  at: number;
  /**
   * the page's HTTP status (absent for a page no longer reached)
   */
  statusCode?: number;
  /**
   * git-diff mode, changed pages: the unified diff of the markdown (document.changeTracking.diff.text)
   */
  diff?: string;
  /**
   * json mode, changed pages: the json fields that changed, each {previous, current}
   */
  json?: {
    [k: string]: {
      previous?: unknown;
      current?: unknown;
    };
  };
}

/**
 * Public topic crawl.events: lifecycle of a crawl, keyed by crawlId, in order per crawl.
 */
export interface CrawlEvent {
  crawlId: string;
  type: "crawl.started" | "crawl.page" | "crawl.completed" | "crawl.failed" | "crawl.cancelled";
  /**
   * epoch milliseconds
   */
  at: number;
  /**
   * for crawl.page: the document's completion order
   */
  seq?: number;
  document?: PageDocument;
  /**
   * for crawl.page without a document (CRAWL_EVENTS_DOCUMENT=false): the page's URL key, the urlKey of its crawl.pages message; its document is that message's, or GET /v2/crawl/{id}?skip=<seq>
   */
  urlKey?: string;
  error?: string | null;
  /**
   * the job's kind (absent: crawl); webhooks of a batch use batch_scrape.* event names
   */
  kind?: "crawl" | "batch";
  /**
   * the team that owns the job (authentication off: "bypass", the one anonymous team)
   */
  teamId?: string;
  /**
   * crawl.completed of a job with the changeTracking format: how many of its pages were new, same, changed and removed (removed: answering 404/410, or no longer reached)
   */
  changeTracking?: {
    new: number;
    same: number;
    changed: number;
    removed: number;
  };
}

/**
 * One crawled page as the API returns it. Fields present depend on the requested formats. With the changeTracking format: changeTracking {previousScrapeAt, changeStatus, visibility, diff?, json?} (docs/api.md; not declared here, so that the public topics' registered schemas stay backward compatible: declaring a property of this open object narrows it).
 */
export interface PageDocument {
  markdown?: string;
  html?: string;
  rawHtml?: string;
  links?: string[];
  metadata: {
    title?: string;
    description?: string;
    language?: string;
    sourceURL: string;
    url: string;
    statusCode: number;
    scrapeId: string;
    contentType?: string;
    creditsUsed?: number;
    ogLocaleAlternate?: string[];
    [k: string]: unknown;
  };
  images?: string[];
  /**
   * question format: the answer (from the page's own text when no LLM is configured)
   */
  answer?: string;
  /**
   * highlights format: the page's passages that match the query, verbatim, separated by blank lines
   */
  highlights?: string;
  /**
   * attributes format: per requested selector, the attribute's values on the matching elements, in document order
   */
  attributes?: {
    selector: string;
    attribute: string;
    values: string[];
  }[];
  [k: string]: unknown;
}

/**
 * The crawl options after defaults were applied; what the pipeline stages read.
 */
export interface CrawlOptions {
  limit: number;
  /**
   * authentication on: the credits the team had left when the job started; the frontier bills the job no more
   */
  maxCredits?: number;
  crawlEntireDomain: boolean;
  allowSubdomains: boolean;
  formats: (
    | "markdown"
    | "html"
    | "rawHtml"
    | "links"
    | "images"
    | "json"
    | "summary"
    | "attributes"
    | "question"
    | "highlights"
    | "branding"
  )[];
  /**
   * the question format's question (formats holds "question")
   */
  question?: string;
  /**
   * the highlights format's query (formats holds "highlights")
   */
  highlightsQuery?: string;
  /**
   * the attributes format's selectors (formats holds "attributes")
   */
  attributes?: {
    selector: string;
    attribute: string;
  }[];
  /**
   * the json format's schema and prompt (formats holds "json")
   */
  json?: {
    schema?: {};
    prompt?: string;
  };
  onlyMainContent: boolean;
  timeoutMs?: number;
  headers?: {
    [k: string]: string;
  };
  /**
   * maxAge: a cached response no older than this is used instead of fetching (0: always fetch)
   */
  maxAgeMs?: number;
  /**
   * false: the fetched response is not written to the page cache (default true)
   */
  storeInCache?: boolean;
  /**
   * minAge: cache-only; the newest cached response when at least this old, else the page fails with SCRAPE_NO_CACHED_DATA
   */
  minAgeMs?: number;
  /**
   * lockdown: cache-only, no outbound request; a miss fails the page with SCRAPE_LOCKDOWN_CACHE_MISS
   */
  lockdown?: boolean;
  includePaths?: string[];
  excludePaths?: string[];
  regexOnFullURL?: boolean;
  maxDiscoveryDepth?: number;
  allowExternalLinks?: boolean;
  ignoreQueryParameters?: boolean;
  deduplicateSimilarURLs?: boolean;
  sitemap?: "skip" | "include" | "only";
  ignoreRobotsTxt?: boolean;
  robotsUserAgent?: string;
  /**
   * spacing between two fetches of this crawl (the request's delay, in seconds, times 1000)
   */
  delayMs?: number;
  maxConcurrency?: number;
  pdf?: {
    /**
     * false: the PDF is returned as base64 for 1 credit (parsers: [])
     */
    parse: boolean;
    maxPages?: number;
    /**
     * the pages the job's credits pay for (authentication on): a PDF is parsed up to there, with a warning
     */
    creditPages?: number;
  };
  includeTags?: string[];
  excludeTags?: string[];
  removeBase64Images?: boolean;
  /**
   * batch: a batch scrape (the given URLs, no link following, no discovery); absent: a crawl
   */
  kind?: "crawl" | "batch";
  /**
   * the crawl's prompt and why it was not turned into options (no LLM configured); shown as a status warning
   */
  promptNotApplied?: string;
  /**
   * wait after the page loaded in the browser
   */
  waitForMs?: number;
  /**
   * @maxItems 50
   */
  actions?: BrowserAction[];
  /**
   * where stored screenshots are served: the API's scheme://host as the client reached it at submit (SCREENSHOTS=url)
   */
  screenshotBase?: string;
  /**
   * the screenshot format
   */
  screenshot?: {
    fullPage?: boolean;
    quality?: number;
    viewport?: {
      width: number;
      height: number;
    };
  };
  mobile?: boolean;
  skipTlsVerification?: boolean;
  /**
   * web archives: fetch-render and render write the job's exchanges as WARC records (pipeline/store/warc)
   */
  warc?: boolean;
  /**
   * static fetch only: no headless browser, even for a page that looks script-built (RENDER=auto) or under RENDER=always
   */
  fastMode?: boolean;
  /**
   * set by the frontier: the job waits for (or got) a slot of its team's concurrency limit. queuedAt: when it was queued; admittedAt: when it started (absent: still waiting); limited: it had to wait
   */
  teamQueue?: {
    queuedAt: number;
    admittedAt?: number;
    limited?: boolean;
  };
  /**
   * false: the browser loads ad and tracker hosts too (default true: blocked, BLOCK_ADS_LISTS)
   */
  blockAds?: boolean;
  /**
   * the changeTracking format: documents are compared with the previous snapshot of the same URL in the team's history for this tag
   */
  changeTracking?: {
    modes: ("git-diff" | "json")[];
    /**
     * "" without a tag
     */
    tag: string;
    /**
     * json was added to the formats for the json mode only: it is compared, kept in the snapshot and left out of the document
     */
    trackingJson?: boolean;
  };
}

/**
 * Public topic crawl.pages: one converted page of a crawl, keyed by crawlId.
 */
export interface CrawlPage {
  crawlId: string;
  urlKey: string;
  credits: number;
  document: PageDocument;
  /**
   * dedup key of the URL after redirects
   */
  finalUrlKey?: string;
  /**
   * the job's kind (absent: crawl)
   */
  kind?: "crawl" | "batch";
  /**
   * the team that owns the job (authentication off: "bypass", the one anonymous team)
   */
  teamId?: string;
  freshness?: PageFreshness;
}

/**
 * Change tracking of one page on its way through the pipeline: its history (team, tag, lineage), what the fetch learned (validators, content hash) and, for a page reused from its snapshot, that it was not converted again.
 */
export interface PageFreshness {
  tag: string;
  /**
   * the page's key in its history: the URL's dedup key (for a batch, of its URL, not of its place in the batch)
   */
  urlKey?: string;
  modes: ("git-diff" | "json")[];
  /**
   * the crawl's start URL key: its pages no longer reached are removed at its end (absent: batch)
   */
  origin?: string;
  optionsHash: string;
  /**
   * sha256 of the fetched body (absent: rendered page)
   */
  contentHash?: string;
  etag?: string;
  lastModified?: string;
  trackingJson?: boolean;
  /**
   * the stored document was reused: the server answered 304, or the body's hash was the stored one
   */
  reused?: "not-modified" | "same-hash";
  /**
   * the page's links (kept in the snapshot, for a later reuse)
   */
  links?: string[];
}

/**
 * Body of POST /v2/crawl. Unknown keys are rejected.
 */
export interface CrawlRequest {
  url: string;
  /**
   * Most pages crawled (default DEFAULT_CRAWL_LIMIT, 10,000). At most the server's CRAWL_MAX_PAGES (default 100,000,000): a larger limit is refused with 400 BAD_REQUEST naming the maximum. With API keys on, also lowered to the team's credits left.
   */
  limit?: number;
  crawlEntireDomain?: boolean;
  allowSubdomains?: boolean;
  allowExternalLinks?: boolean;
  /**
   * @maxItems 100
   */
  includePaths?: string[];
  /**
   * @maxItems 100
   */
  excludePaths?: string[];
  maxDiscoveryDepth?: number;
  ignoreRobotsTxt?: boolean;
  robotsUserAgent?: string;
  sitemap?: "skip" | "include" | "only";
  deduplicateSimilarURLs?: boolean;
  ignoreQueryParameters?: boolean;
  regexOnFullURL?: boolean;
  delay?: number;
  maxConcurrency?: number;
  scrapeOptions?: ScrapeOptions;
  webhook?: Webhook;
  prompt?: string;
  zeroDataRetention?: boolean;
  /**
   * Trawl extension: write the job's exchanges as web archives (WARC 1.1, gzip per record, with a CDXJ index), served at /v2/crawl/{id}/warc and /v2/crawl/{id}/cdxj (batch scrapes: /v2/batch/scrape/{id}/...). Default: the server's WARC_DEFAULT.
   */
  warc?: boolean;
  origin?: string;
  integration?: string | null;
}

/**
 * Scrape options applied to every page of a crawl (wire name scrapeOptions).
 */
export interface ScrapeOptions {
  /**
   * @maxItems 20
   */
  formats?: (
    | (
        | "markdown"
        | "html"
        | "rawHtml"
        | "links"
        | "images"
        | "json"
        | "summary"
        | "screenshot"
        | "screenshot@fullPage"
        | "changeTracking"
        | "branding"
      )
    | {
        type:
          | "markdown"
          | "html"
          | "rawHtml"
          | "links"
          | "images"
          | "json"
          | "summary"
          | "screenshot"
          | "attributes"
          | "question"
          | "highlights"
          | "branding"
          | "changeTracking";
        /**
         * question format: the question to answer about the page (document.answer)
         */
        question?: string;
        /**
         * highlights format: what to find in the page's text (document.highlights)
         */
        query?: string;
        /**
         * attributes format: for each CSS selector, the values of one attribute on every element of the page it matches
         *
         * @minItems 1
         * @maxItems 100
         */
        selectors?: [
          {
            selector: string;
            attribute: string;
          },
          ...{
            selector: string;
            attribute: string;
          }[]
        ];
        /**
         * json format: the JSON Schema of document.json (compiled with ajv at submit; an invalid schema is a 400)
         */
        schema?: {};
        /**
         * json format: instructions for the llm provider (the rules provider follows the schema only)
         */
        prompt?: string;
        fullPage?: boolean;
        quality?: number;
        viewport?: {
          width: number;
          height: number;
        };
        /**
         * changeTracking format: git-diff (a unified diff of the markdown) and/or json (the json fields compared with their previous values)
         *
         * @maxItems 2
         */
        modes?: ("git-diff" | "json")[];
        /**
         * changeTracking format: a separate history of the same URLs (default: none)
         */
        tag?: string | null;
      }
  )[];
  onlyMainContent?: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  /**
   * Request headers of the page fetch: names are HTTP tokens; values are Latin-1 text without CR, LF or NUL.
   */
  headers?: {
    [k: string]: string;
  };
  waitFor?: number;
  timeout?: number;
  mobile?: boolean;
  /**
   * @maxItems 50
   */
  actions?: BrowserAction[];
  parsers?: (
    | "pdf"
    | {
        type: "pdf";
        maxPages?: number;
        mode?: "fast" | "auto" | "ocr";
      }
  )[];
  skipTlsVerification?: boolean;
  removeBase64Images?: boolean;
  blockAds?: boolean;
  fastMode?: boolean;
  proxy?: "basic" | "stealth" | "auto" | "enhanced";
  maxAge?: number;
  storeInCache?: boolean;
  /**
   * Cache-only: the newest cached response of the page, when it is at least this old (ms); no fetch. A miss is 404 SCRAPE_NO_CACHED_DATA
   */
  minAge?: number;
  /**
   * Cache-only, never an outbound request (maxAge defaults to 2 years, capped by CACHE_MAX_AGE_MS); a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS; the result is not stored
   */
  lockdown?: boolean;
  location?: {
    country?: string;
    languages?: string[];
  };
}

/**
 * Internal topic extract.jobs: a POST /v2/extract job handed to the api role's extract-jobs consumer group, which runs it; its offset is committed only once the job's final state is stored, so a job whose owner died is run again (resumed from its record in the store) by the replica the group gives its partition to. Keyed by the job id.
 */
export interface ExtractJob {
  jobId: string;
  teamId: string;
  request: ExtractRequest;
  /**
   * ms since the epoch
   */
  createdAt: number;
}

/**
 * POST /v2/extract: structured data from pages (a URL ending in /* means a crawl of that path), or from a finished crawl's stored pages (crawlId, no fetch).
 */
export interface ExtractRequest {
  /**
   * @maxItems 100
   */
  urls?: string[];
  /**
   * Trawl: extract again from this finished crawl's stored documents, without fetching
   */
  crawlId?: string;
  prompt?: string;
  schema?: {};
  systemPrompt?: string;
  allowExternalLinks?: boolean;
  includeSubdomains?: boolean;
  enableWebSearch?: boolean;
  showSources?: boolean;
  ignoreInvalidURLs?: boolean;
  ignoreSitemap?: boolean;
  /**
   * Trawl: pages per /* crawl (default 50)
   */
  limit?: number;
  scrapeOptions?: ScrapeOptions;
  origin?: string;
  integration?: string;
  agent?: {};
  webhook?: unknown;
  threatProtection?: unknown;
}

/**
 * One URL to fetch, keyed by crawlId + host.
 */
export interface FetchTask {
  crawlId: string;
  url: string;
  urlKey: string;
  depth: number;
  attempt: number;
  options: CrawlOptions;
  /**
   * page: fetch and convert one URL; discover: read robots.txt and sitemaps of the start URL
   */
  kind?: "page" | "discover";
  /**
   * the crawl's start URL (scope of redirect targets)
   */
  startUrl?: string;
  /**
   * the team that owns the job (authentication off: "bypass", the one anonymous team)
   */
  teamId?: string;
}

/**
 * Events of one crawl, keyed by crawlId, consumed by the frontier in order.
 */
export type FrontierInboxMessage =
  | CrawlRequested
  | LinksDiscovered
  | PageDone
  | PageFailed
  | CancelRequested
  | DiscoveryDone
  | ResumeRequested
  | SeedsAdded
  | Admitted;

export interface CrawlRequested {
  type: "CrawlRequested";
  crawlId: string;
  url: string;
  createdAt: number;
  options: CrawlOptions;
  teamId?: string;
  /**
   * the webhook setting as JSON text, or empty
   */
  webhook?: string;
}

export interface LinksDiscovered {
  type: "LinksDiscovered";
  crawlId: string;
  urlKey: string;
  depth: number;
  links: string[];
  /**
   * sitemap links get depth 0 and are accepted with sitemap=only
   */
  source?: "page" | "sitemap";
  /**
   * the page the links were found on (after redirects)
   */
  url?: string;
}

export interface PageDone {
  type: "PageDone";
  crawlId: string;
  urlKey: string;
  credits: number;
  /**
   * LLM tokens the page's json / summary extraction used (absent: none)
   */
  tokens?: number;
}

export interface PageFailed {
  type: "PageFailed";
  crawlId: string;
  urlKey: string;
  url: string;
  code: string;
  error: string;
  statusCode?: number;
  /**
   * fetch attempts made (absent: not counted)
   */
  attempts?: number;
  /**
   * SCRAPE_RACED_REDIRECT: the page (after redirects) already stored under another URL
   */
  duplicateOf?: string;
}

export interface CancelRequested {
  type: "CancelRequested";
  crawlId: string;
}

export interface DiscoveryDone {
  type: "DiscoveryDone";
  crawlId: string;
  sitemaps?: number;
  /**
   * Sitemaps skipped for a reason the caller should see (recorded as the crawl's errors).
   */
  warnings?: {
    url: string;
    code: string;
    error: string;
  }[];
}

/**
 * Sent at start after a crash damaged the embedded logs: the frontier sends the fetch tasks of the crawl's queued URLs again (duplicates are harmless downstream), so no crawl waits for a message that was lost.
 */
export interface ResumeRequested {
  type: "ResumeRequested";
  crawlId: string;
}

/**
 * URLs of a batch scrape, in chunks (no message over the size limit); last=true ends the seeding of this request
 */
export interface SeedsAdded {
  type: "SeedsAdded";
  crawlId: string;
  /**
   * unique per request: seeds are never deduplicated (the same URL twice is scraped twice)
   */
  keyPrefix: string;
  /**
   * index of urls[0] in the request
   */
  first: number;
  urls: string[];
  last: boolean;
  /**
   * authentication on: credits an append reserved for its URLs; the batch's budget (maxCredits, and its PDFs' creditPages) is raised by them once (first chunk only)
   */
  credits?: number;
}

/**
 * The team's admission lets a held job run (team.admission -> frontier.inbox): the frontier sends the fetch tasks of its queued URLs.
 */
export interface Admitted {
  type: "Admitted";
  crawlId: string;
  /**
   * the job waited for a slot of its team's concurrency limit
   */
  limited: boolean;
  /**
   * how long it waited, in milliseconds
   */
  queuedMs: number;
}

/**
 * Body of POST /v2/map. Unknown keys are rejected.
 */
export interface MapRequest {
  url: string;
  /**
   * Ranks the links by relevance to these words (URL, title, description) and keeps only those that match.
   */
  search?: string;
  /**
   * include (default): sitemap URLs and links of fetched pages; skip: links only; only: sitemap URLs only.
   */
  sitemap?: "include" | "skip" | "only";
  /**
   * Keep links on subdomains of the site (default true).
   */
  includeSubdomains?: boolean;
  /**
   * Drop query strings: URLs that differ only there are one link (default true).
   */
  ignoreQueryParameters?: boolean;
  /**
   * Most links returned (default 5000).
   */
  limit?: number;
  /**
   * Time limit of the whole map in ms; exceeded: 408 MAP_TIMEOUT.
   */
  timeout?: number;
  /**
   * languages: sent as Accept-Language on every fetch. country is not supported (no geo proxies).
   */
  location?: {
    country?: string;
    /**
     * @maxItems 20
     */
    languages?: string[];
  };
  origin?: string;
  integration?: string;
}

/**
 * POST /v2/monitor: a schedule that re-runs a crawl or a batch scrape with change tracking (Firecrawl's /v2/monitor shape).
 */
export interface MonitorRequest {
  name: string;
  schedule: MonitorSchedule;
  webhook?: MonitorWebhook;
  notification?: MonitorNotification;
  /**
   * Trawl runs one target per monitor (Firecrawl takes up to 50).
   *
   * @minItems 1
   * @maxItems 1
   */
  targets: [MonitorTarget, ...MonitorTarget[]];
  retentionDays?: number;
  /**
   * Kept and shown; Trawl has no change judge (`judgeEnabled` is always false).
   */
  goal?: string | null;
  judgeEnabled?: boolean;
  /**
   * the client that sent the request (the SDKs send `js-sdk@<version>`); not stored
   */
  origin?: string;
  /**
   * not stored
   */
  integration?: string | null;
}

/**
 * When the monitor runs: exactly one of `cron` (five fields), `text` (Firecrawl's schedule texts: `every 30 minutes`, `every 15 minutes starting at :07`, `hourly`, `every 2 hours`, `daily`, `daily at 9am`, `weekly`) and `intervalSeconds` (Trawl: a plain interval from the monitor's creation or last resume). Ticks closer than MONITOR_MIN_INTERVAL_MS (5 minutes by default) are refused.
 */
export interface MonitorSchedule {
  /**
   * Five-field cron expression (minute hour day-of-month month day-of-week), in `timezone`.
   */
  cron?: string;
  /**
   * Firecrawl's natural-language schedule.
   */
  text?: string;
  /**
   * Trawl: a plain interval, in seconds.
   */
  intervalSeconds?: number;
  /**
   * IANA timezone of `cron` and `text`.
   */
  timezone?: string;
}

/**
 * Where monitor events go. Trawl sends them on change only: `monitor.page` for a page found new or changed, `monitor.check.completed` for a check that found a change (new, changed or removed pages) or failed.
 */
export interface MonitorWebhook {
  url: string;
  headers?: {
    [k: string]: string;
  };
  metadata?: {};
  events?: ("monitor.page" | "monitor.check.completed")[];
}

/**
 * Firecrawl's email notifications: not sent by Trawl (a request that enables them is refused with a 400).
 */
export interface MonitorNotification {
  email?: {
    enabled?: boolean;
    /**
     * @maxItems 25
     */
    recipients?: string[];
    includeDiffs?: boolean;
  };
}

/**
 * What a check runs: `crawl` (a crawl of `url` with `crawlOptions`, as POST /v2/crawl takes them) or `scrape` (a batch scrape of `urls`). Pages are compared with the monitor's previous check (the changeTracking format is added to `scrapeOptions`).
 */
export interface MonitorTarget {
  id?: string;
  type: "crawl" | "scrape";
  url?: string;
  /**
   * @minItems 1
   * @maxItems 1000
   */
  urls?: [string, ...string[]];
  /**
   * The options of POST /v2/crawl (limit, maxDiscoveryDepth, includePaths, excludePaths, sitemap, ...), without url, webhook and scrapeOptions.
   */
  crawlOptions?: {};
  /**
   * The scrape options of POST /v2/crawl's scrapeOptions.
   */
  scrapeOptions?: {};
}

/**
 * PATCH /v2/monitor/:id: the fields to change (at least one); `status` pauses or resumes the monitor.
 */
export interface MonitorUpdate {
  name?: string;
  schedule?: MonitorSchedule;
  webhook?: MonitorWebhook;
  notification?: MonitorNotification;
  /**
   * Trawl runs one target per monitor (Firecrawl takes up to 50).
   *
   * @minItems 1
   * @maxItems 1
   */
  targets?: [MonitorTarget, ...MonitorTarget[]];
  retentionDays?: number;
  /**
   * Kept and shown; Trawl has no change judge (`judgeEnabled` is always false).
   */
  goal?: string | null;
  judgeEnabled?: boolean;
  status?: "active" | "paused";
  /**
   * the client that sent the request (the SDKs send `js-sdk@<version>`); not stored
   */
  origin?: string;
  /**
   * not stored
   */
  integration?: string | null;
}

/**
 * Internal topic pages.extract: a converted page whose formats ask for json or summary, on its way to the extract-json stage (which produces it to crawl.pages). Keyed by crawlId + url key.
 */
export interface PageExtract {
  crawlId: string;
  urlKey: string;
  credits: number;
  document: PageDocument;
  /**
   * the job's kind (absent: crawl)
   */
  kind?: "crawl" | "batch";
  /**
   * dedup key of the URL after redirects
   */
  finalUrlKey?: string;
  /**
   * the page as fetched (JSON-LD, meta, tables), for a provider that parses it; absent when `rules` carries the rules provider's result
   */
  html?: string;
  /**
   * the rules provider's json result, computed by the convert worker from the tree it parsed (so extract-json does not parse the page again): data, sources (JSON pointer -> source), warnings
   */
  rules?: {
    data?: unknown;
    sources: {};
    warnings: string[];
  };
  /**
   * the page's markdown when the document does not carry it (markdown not among the formats)
   */
  markdown?: string;
  extract: {
    json?: {
      schema?: {};
      prompt?: string;
    };
    summary?: boolean;
    /**
     * the question format's question
     */
    question?: string;
    /**
     * the highlights format's query
     */
    highlights?: string;
  };
  /**
   * the team that owns the job (authentication off: "bypass", the one anonymous team)
   */
  teamId?: string;
  freshness?: PageFreshness;
}

/**
 * A fetched page on its way to conversion, keyed by crawlId + url key.
 */
export interface PageFetched {
  crawlId: string;
  url: string;
  urlKey: string;
  finalUrl: string;
  depth: number;
  statusCode: number;
  contentType: string;
  body: string;
  scrapeId: string;
  options: CrawlOptions;
  /**
   * dedup key of the URL after redirects
   */
  finalUrlKey?: string;
  /**
   * binary bodies (PDF): the bytes, base64; body is then empty
   */
  bodyBase64?: string;
  /**
   * the response came from the page cache; when it was fetched (ms)
   */
  cachedAt?: number;
  /**
   * set when the page cache was consulted (maxAge > 0)
   */
  cacheState?: "hit" | "miss";
  /**
   * what produced body: the static fetcher or the browser
   */
  engine?: "fetch" | "chromium";
  /**
   * the screenshot format: a data URL, or the URL of the stored image (SCREENSHOTS=url)
   */
  screenshot?: string;
  /**
   * the branding format: the rendered page's brand profile (branding.schema.json), copied to the document
   */
  branding?: {};
  /**
   * results of the browser actions (screenshots, scrapes, javascriptReturns, pdfs)
   */
  actions?: {};
  /**
   * a note for the document's warning field
   */
  warning?: string;
  /**
   * the team that owns the job (authentication off: "bypass", the one anonymous team)
   */
  teamId?: string;
  freshness?: PageFreshness;
  /**
   * the stored document and links of a page that did not change (304 or same content hash): converted no more
   */
  reuse?: {
    document: PageDocument;
    links: string[];
    scrapedAt?: number;
  };
}

/**
 * POST /v2/crawl/params-preview: the crawl options a prompt would give (needs an LLM).
 */
export interface ParamsPreviewRequest {
  url: string;
  prompt: string;
  [k: string]: unknown;
}

/**
 * A page handed by fetch-render to the render role (headless Chromium), keyed like its fetch task (crawlId + host).
 */
export interface RenderTask {
  task: FetchTask;
  /**
   * why a browser: the option that needs one (waitFor, actions, screenshot, mobile), RENDER=always, or what the static HTML showed
   */
  reason: string;
  /**
   * true: the request needs a browser (no browser: the page fails); false: auto-detected (no browser: the static page, with a warning)
   */
  required: boolean;
  /**
   * the page as the static fetch got it: answers the browser's first navigation, and is the fallback
   */
  document?: {
    finalUrl: string;
    statusCode: number;
    contentType: string;
    body: string;
  };
}

/**
 * Body of POST /v2/scrape: url plus every scrape option at the top level. Unknown keys are rejected.
 */
export interface ScrapeRequest {
  url: string;
  /**
   * @maxItems 20
   */
  formats?: (
    | (
        | "markdown"
        | "html"
        | "rawHtml"
        | "links"
        | "images"
        | "json"
        | "summary"
        | "screenshot"
        | "screenshot@fullPage"
        | "changeTracking"
        | "branding"
      )
    | {
        type:
          | "markdown"
          | "html"
          | "rawHtml"
          | "links"
          | "images"
          | "json"
          | "summary"
          | "screenshot"
          | "attributes"
          | "question"
          | "highlights"
          | "branding"
          | "changeTracking";
        /**
         * question format: the question to answer about the page (document.answer)
         */
        question?: string;
        /**
         * highlights format: what to find in the page's text (document.highlights)
         */
        query?: string;
        /**
         * attributes format: for each CSS selector, the values of one attribute on every element of the page it matches
         *
         * @minItems 1
         * @maxItems 100
         */
        selectors?: [
          {
            selector: string;
            attribute: string;
          },
          ...{
            selector: string;
            attribute: string;
          }[]
        ];
        /**
         * json format: the JSON Schema of document.json (compiled with ajv at submit; an invalid schema is a 400)
         */
        schema?: {};
        /**
         * json format: instructions for the llm provider (the rules provider follows the schema only)
         */
        prompt?: string;
        fullPage?: boolean;
        quality?: number;
        viewport?: {
          width: number;
          height: number;
        };
        /**
         * changeTracking format: git-diff (a unified diff of the markdown) and/or json (the json fields compared with their previous values)
         *
         * @maxItems 2
         */
        modes?: ("git-diff" | "json")[];
        /**
         * changeTracking format: a separate history of the same URLs (default: none)
         */
        tag?: string | null;
      }
  )[];
  onlyMainContent?: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  /**
   * Request headers of the page fetch: names are HTTP tokens; values are Latin-1 text without CR, LF or NUL.
   */
  headers?: {
    [k: string]: string;
  };
  waitFor?: number;
  timeout?: number;
  mobile?: boolean;
  /**
   * @maxItems 50
   */
  actions?: BrowserAction[];
  parsers?: (
    | "pdf"
    | {
        type: "pdf";
        maxPages?: number;
        mode?: "fast" | "auto" | "ocr";
      }
  )[];
  skipTlsVerification?: boolean;
  removeBase64Images?: boolean;
  blockAds?: boolean;
  fastMode?: boolean;
  proxy?: "basic" | "stealth" | "auto" | "enhanced";
  maxAge?: number;
  storeInCache?: boolean;
  /**
   * Cache-only: the newest cached response of the page, when it is at least this old (ms); no fetch. A miss is 404 SCRAPE_NO_CACHED_DATA
   */
  minAge?: number;
  /**
   * Cache-only, never an outbound request (maxAge defaults to 2 years, capped by CACHE_MAX_AGE_MS); a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS; the result is not stored
   */
  lockdown?: boolean;
  location?: {
    country?: string;
    languages?: string[];
  };
  origin?: string;
  integration?: string | null;
  zeroDataRetention?: boolean;
}

/**
 * Body of POST /v2/search. Unknown keys are rejected.
 */
export interface SearchRequest {
  query: string;
  /**
   * Most results (default 5).
   */
  limit?: number;
  /**
   * @maxItems 3
   */
  sources?: (
    | ("web" | "news" | "images")
    | {
        type: "web" | "news" | "images";
      }
  )[];
  /**
   * @maxItems 100
   */
  includeDomains?: string[];
  /**
   * @maxItems 100
   */
  excludeDomains?: string[];
  /**
   * Time limit of the whole search in ms (default 60000).
   */
  timeout?: number;
  ignoreInvalidURLs?: boolean;
  scrapeOptions?: ScrapeOptions;
  tbs?: string;
  location?: string;
  country?: string;
  /**
   * @maxItems 10
   */
  categories?: unknown[];
  origin?: string;
  integration?: string;
}

/**
 * Internal topic team.admission, keyed by teamId: the jobs (crawls, batch scrapes) of one team asking to run and ending, in order, for the per-team concurrency limit.
 */
export type TeamAdmissionMessage = JobQueued | JobEnded;

/**
 * The frontier holds a new job until the team's admission lets it run.
 */
export interface JobQueued {
  type: "JobQueued";
  teamId: string;
  crawlId: string;
  /**
   * epoch milliseconds: when the frontier queued the job
   */
  at: number;
}

/**
 * The job completed, failed or was cancelled (queued or running): its slot, or its place in the queue, is freed.
 */
export interface JobEnded {
  type: "JobEnded";
  teamId: string;
  crawlId: string;
  at: number;
}

/**
 * Internal topics webhook.deliveries (first attempts, keyed by crawlId), webhook.parked (first attempts to a busy or slow endpoint, keyed by endpoint) and webhook.retries (later attempts, keyed by crawlId and event id): one signed webhook request to make.
 */
export interface WebhookDelivery {
  crawlId: string;
  /**
   * unique per crawl and event: type plus seq for pages
   */
  eventId: string;
  event: string;
  url: string;
  headers: {
    [k: string]: string;
  };
  /**
   * the exact request body, signed
   */
  body: string;
  attempt: number;
  /**
   * epoch ms before which the attempt must not be made
   */
  notBefore: number;
}
