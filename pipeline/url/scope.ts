// Which discovered URLs belong to a crawl. Pure. The rules and their order follow the Firecrawl v2 crawler
// (reference section 3), except that the child-path rule admits real children only (`/blogs` excludes `/blogs-old`).
import { RE2JS } from "re2js";
import { getDomain } from "tldts";
import type { CrawlOptions } from "../../schemas/index.ts";

/** File types never crawled (the reference's list; PDF, DOCX and XML are crawled). */
const SKIPPED_EXTENSIONS = new Set([
  "png", "jpg", "jpeg", "gif", "css", "js", "ico", "svg", "tiff", "zip", "exe", "dmg", "mp4", "mp3", "wav", "pptx",
  "xlsx", "avi", "flv", "woff", "ttf", "woff2", "webp", "inc",
]);

/** External links that are never followed, even with allowExternalLinks. */
const SOCIAL = ["facebook.com", "twitter.com", "x.com", "linkedin.com", "instagram.com", "pinterest.com", "github.com", "calendly.com", "discord.gg", "discord.com"];

export type ScopeVerdict = "ok" | "external" | "outside-path" | "skipped-file-type" | "excluded" | "not-included";

export type ScopeOptions = Pick<CrawlOptions, "crawlEntireDomain" | "allowSubdomains" | "allowExternalLinks" | "includePaths" | "excludePaths" | "regexOnFullURL">;

const bareHost = (host: string) => host.toLowerCase().replace(/^www\./, "");

interface Compiled {
  include: RE2JS[];
  exclude: RE2JS[];
}

const compiledCache = new WeakMap<object, Compiled>();

/** Compiles a crawl's include/exclude patterns (RE2 syntax: linear time, no look-around, no back-references). */
function compiled(options: ScopeOptions): Compiled {
  let c = compiledCache.get(options);
  if (!c) {
    c = { include: (options.includePaths ?? []).map((p) => RE2JS.compile(p)), exclude: (options.excludePaths ?? []).map((p) => RE2JS.compile(p)) };
    compiledCache.set(options, c);
  }
  return c;
}

/** Null when the pattern is valid RE2; otherwise why not. */
export function patternError(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * The verdict for `candidate`, a link found on `from` (the page's URL after redirects; the start URL for sitemap links).
 */
export function inScope(start: string, candidate: string, options: ScopeOptions, from: string = start): ScopeVerdict {
  const s = new URL(start);
  const c = new URL(candidate);
  const startHost = bareHost(s.hostname);
  const host = bareHost(c.hostname);
  if (host !== startHost) {
    const href = c.href.toLowerCase();
    if (href.startsWith("mailto:") || SOCIAL.some((d) => host === d || host.endsWith("." + d))) return "external";
    const fromInternal = bareHost(new URL(from).hostname) === startHost;
    const oneHopOut = options.allowExternalLinks && fromInternal && c.pathname.split("/").filter(Boolean).length >= 1;
    const sameSite = options.allowSubdomains && getDomain(host) !== null && getDomain(host) === getDomain(startHost);
    if (!oneHopOut && !sameSite) return "external";
  }
  const ext = /\.([a-z0-9]{1,5})$/i.exec(c.pathname)?.[1]?.toLowerCase();
  if (ext && SKIPPED_EXTENSIONS.has(ext)) return "skipped-file-type";
  const subject = options.regexOnFullURL ? c.href : c.pathname;
  const { include, exclude } = compiled(options);
  if (exclude.some((r) => r.matcher(subject).find())) return "excluded";
  if (include.length > 0 && !include.some((r) => r.matcher(subject).find())) return "not-included";
  if (!options.crawlEntireDomain && !isChildPath(s.pathname, c.pathname)) return "outside-path";
  return "ok";
}

/** `/blogs/` admits `/blogs/` and everything below it; `/blogs` admits itself and `/blogs/...` (not `/blogs-old`). */
export function isChildPath(startPath: string, path: string): boolean {
  if (startPath === "/" || startPath === "") return true;
  const dir = startPath.endsWith("/") ? startPath : startPath + "/";
  return path === startPath || path === dir.slice(0, -1) || path.startsWith(dir);
}
