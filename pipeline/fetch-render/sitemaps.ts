// Sitemap discovery: robots.txt Sitemap lines, <start path>/sitemap.xml and /sitemap.xml; sitemap indexes are followed
// (also gzipped ones), at most `maxSitemaps` files per crawl. A gzipped sitemap is inflated as a stream under
// SITEMAP_MAX_BYTES (a 1 MB file can inflate to gigabytes): past it the sitemap is skipped with a crawl warning.
import { PageError } from "../runtime/errors.ts";
import { InflateTooLargeError, inflateCapped } from "../net/inflate.ts";
import type { Fetcher } from "./fetcher.ts";

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&apos;": "'" };

/** The <loc> entries of a sitemap or sitemap index, and which of the two it is. */
export function parseSitemap(xml: string): { kind: "index" | "urlset" | "unknown"; locs: string[] } {
  const kind = /<sitemapindex[\s>]/i.test(xml) ? "index" : /<urlset[\s>]/i.test(xml) ? "urlset" : "unknown";
  const locs: string[] = [];
  const re = /<loc>\s*(?:<!\[CDATA\[)?\s*([^<\]]+?)\s*(?:\]\]>)?\s*<\/loc>/gi;
  for (let m = re.exec(xml); m; m = re.exec(xml)) {
    locs.push((m[1] as string).replace(/&(amp|lt|gt|quot|apos);/g, (e) => ENTITIES[e] ?? e));
  }
  return { kind, locs };
}

/** Candidate sitemap URLs for a crawl, in the order they are tried. */
export function sitemapCandidates(startUrl: string, fromRobots: string[]): string[] {
  const u = new URL(startUrl);
  const dir = u.pathname.endsWith("/") ? u.pathname : u.pathname.replace(/[^/]*$/, "");
  const out = [...fromRobots];
  if (/\.xml(\.gz)?$/i.test(u.pathname)) out.unshift(u.href);
  out.push(new URL(`${dir}sitemap.xml`, u.origin).href, new URL("/sitemap.xml", u.origin).href);
  return [...new Set(out)];
}

/** A sitemap skipped for a reason the caller should see (it becomes an error row of the crawl). */
export interface SitemapWarning {
  url: string;
  code: "SITEMAP_TOO_LARGE";
  error: string;
}

export interface SitemapResult {
  urls: string[];
  sitemaps: number;
  warnings: SitemapWarning[];
}

export async function discoverSitemapUrls(
  fetcher: Fetcher,
  startUrl: string,
  fromRobots: string[],
  opts: { maxSitemaps: number; maxUrls: number; timeoutMs: number; maxBytes: number },
): Promise<SitemapResult> {
  const queue = sitemapCandidates(startUrl, fromRobots);
  const seen = new Set<string>();
  const urls = new Set<string>();
  const warnings: SitemapWarning[] = [];
  let fetched = 0;
  while (queue.length && fetched < opts.maxSitemaps && urls.size < opts.maxUrls) {
    const next = queue.shift() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    let xml: string;
    try {
      const res = await fetcher.fetch({ url: next, timeoutMs: opts.timeoutMs, raw: true });
      if (res.statusCode < 200 || res.statusCode >= 300) continue;
      fetched++;
      const bytes = res.bytes ?? Buffer.from(res.body);
      xml = bytes[0] === 0x1f && bytes[1] === 0x8b ? (await inflateCapped(bytes, "gzip", opts.maxBytes)).toString("utf8") : res.body;
    } catch (err) {
      // a sitemap that cannot be read is skipped; its siblings still count. Too large ones are reported.
      if (err instanceof InflateTooLargeError || (err instanceof PageError && err.code === "SCRAPE_TOO_LARGE")) {
        warnings.push({ url: next, code: "SITEMAP_TOO_LARGE", error: `sitemap skipped: ${err.message}` });
      }
      continue;
    }
    const { kind, locs } = parseSitemap(xml);
    if (kind === "index") queue.push(...locs);
    else for (const loc of locs) if (urls.size < opts.maxUrls) urls.add(loc);
  }
  return { urls: [...urls], sitemaps: fetched, warnings };
}
