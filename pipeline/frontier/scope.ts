// Which discovered URLs belong to a crawl. Pure.
import type { CrawlOptions } from "../../schemas/index.ts";

/** File types never crawled (the reference's list; PDF, DOCX and XML are crawled). */
const SKIPPED_EXTENSIONS = new Set([
  "png", "jpg", "jpeg", "gif", "css", "js", "ico", "svg", "tiff", "zip", "exe", "dmg", "mp4", "mp3", "wav", "pptx",
  "xlsx", "avi", "flv", "woff", "ttf", "woff2", "webp", "inc",
]);

export type ScopeVerdict = "ok" | "external" | "outside-path" | "skipped-file-type";

const bareHost = (host: string) => host.toLowerCase().replace(/^www\./, "");

/**
 * Default scope: same host (www. ignored) and a path under the start URL's path.
 * `crawlEntireDomain` lifts the path rule; `allowSubdomains` admits hosts under the start host's domain.
 */
export function inScope(start: string, candidate: string, options: Pick<CrawlOptions, "crawlEntireDomain" | "allowSubdomains">): ScopeVerdict {
  const s = new URL(start);
  const c = new URL(candidate);
  const startHost = bareHost(s.hostname);
  const host = bareHost(c.hostname);
  const sameHost = host === startHost;
  const subdomain = options.allowSubdomains && host.endsWith("." + startHost);
  if (!sameHost && !subdomain) return "external";
  const ext = /\.([a-z0-9]{1,5})$/i.exec(c.pathname)?.[1]?.toLowerCase();
  if (ext && SKIPPED_EXTENSIONS.has(ext)) return "skipped-file-type";
  if (!options.crawlEntireDomain && !isChildPath(s.pathname, c.pathname)) return "outside-path";
  return "ok";
}

/** `/blogs/` admits `/blogs/` and everything below it; `/blogs` admits itself and `/blogs/...` (not `/blogs-old`). */
export function isChildPath(startPath: string, path: string): boolean {
  if (startPath === "/" || startPath === "") return true;
  const dir = startPath.endsWith("/") ? startPath : startPath + "/";
  return path === startPath || path === dir.slice(0, -1) || path.startsWith(dir);
}
