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
  return scopeRule(start, candidate, options, from).verdict;
}

/** The verdict and the rule that decided it (the matching excludePaths pattern, the host, the start path, ...). */
export function scopeRule(start: string, candidate: string, options: ScopeOptions, from: string = start): { verdict: ScopeVerdict; rule: string } {
  const s = new URL(start);
  const c = new URL(candidate);
  const startHost = bareHost(s.hostname);
  const host = bareHost(c.hostname);
  if (host !== startHost) {
    const href = c.href.toLowerCase();
    if (href.startsWith("mailto:") || SOCIAL.some((d) => host === d || host.endsWith("." + d))) return { verdict: "external", rule: `${c.hostname} is never followed` };
    const fromInternal = bareHost(new URL(from).hostname) === startHost;
    const oneHopOut = options.allowExternalLinks && fromInternal && c.pathname.split("/").filter(Boolean).length >= 1;
    const sameSite = options.allowSubdomains && getDomain(host) !== null && getDomain(host) === getDomain(startHost);
    if (!oneHopOut && !sameSite) {
      const rule = options.allowExternalLinks && !fromInternal ? "allowExternalLinks follows one hop out only" : `${c.hostname} is not ${s.hostname}`;
      return { verdict: "external", rule };
    }
  }
  const ext = /\.([a-z0-9]{1,5})$/i.exec(c.pathname)?.[1]?.toLowerCase();
  if (ext && SKIPPED_EXTENSIONS.has(ext)) return { verdict: "skipped-file-type", rule: `.${ext} files are never crawled` };
  const subject = options.regexOnFullURL ? c.href : c.pathname;
  const { include, exclude } = compiled(options);
  const hit = exclude.findIndex((r) => r.matcher(subject).find());
  if (hit >= 0) return { verdict: "excluded", rule: String(options.excludePaths?.[hit]) };
  if (include.length > 0 && !include.some((r) => r.matcher(subject).find())) return { verdict: "not-included", rule: `matches none of includePaths ${JSON.stringify(options.includePaths)}` };
  if (!options.crawlEntireDomain && !isChildPath(s.pathname, c.pathname)) return { verdict: "outside-path", rule: `not under ${s.pathname} (crawlEntireDomain is false)` };
  return { verdict: "ok", rule: "" };
}

/** `/blogs/` admits `/blogs/` and everything below it; `/blogs` admits itself and `/blogs/...` (not `/blogs-old`). */
export function isChildPath(startPath: string, path: string): boolean {
  if (startPath === "/" || startPath === "") return true;
  const dir = startPath.endsWith("/") ? startPath : startPath + "/";
  return path === startPath || path === dir.slice(0, -1) || path.startsWith(dir);
}
