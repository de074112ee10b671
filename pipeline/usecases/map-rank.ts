// The pure part of POST /v2/map: merging candidate links (dedup with the crawl's URL key), ranking by a search.
import { urlKey } from "../url/normalize-url.ts";

export interface MapLink {
  url: string;
  title?: string;
  description?: string;
}

/** Lower-case words of letters and digits (any script). */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Collects links in order, one per dedup key (the crawl's rules: www./bare host, http/https, trailing slash and
 * index files merge; `ignoreQueryParameters` drops query strings, also from the returned URL). A later candidate
 * for a key already seen only adds a title or description that was missing.
 */
export class LinkSet {
  private readonly byKey = new Map<string, MapLink>();
  private readonly ignoreQuery: boolean;

  constructor(ignoreQueryParameters: boolean) {
    this.ignoreQuery = ignoreQueryParameters;
  }

  get size(): number {
    return this.byKey.size;
  }

  add(link: MapLink): void {
    let url = link.url;
    if (this.ignoreQuery && url.includes("?")) {
      const u = new URL(url);
      u.search = "";
      url = u.href;
    }
    const key = urlKey(url, { ignoreQueryParameters: this.ignoreQuery });
    const prev = this.byKey.get(key);
    if (!prev) {
      this.byKey.set(key, { url, ...(link.title ? { title: link.title } : {}), ...(link.description ? { description: link.description } : {}) });
      return;
    }
    if (!prev.title && link.title) prev.title = link.title;
    if (!prev.description && link.description) prev.description = link.description;
  }

  links(): MapLink[] {
    return [...this.byKey.values()];
  }
}

/**
 * Links that match `search`, most relevant first: every query word found in the URL (2), title (3) or description
 * (1) scores, the whole query as a phrase adds 5; links matching no word are dropped. Ties keep discovery order.
 */
export function rankLinks(links: MapLink[], search: string): MapLink[] {
  const terms = [...new Set(words(search))];
  if (terms.length === 0) return links;
  const phrase = terms.join(" ");
  const scored: { link: MapLink; score: number; i: number }[] = [];
  links.forEach((link, i) => {
    const url = decodeSafe(link.url).toLowerCase();
    const title = (link.title ?? "").toLowerCase();
    const description = (link.description ?? "").toLowerCase();
    let score = 0;
    for (const t of terms) score += (url.includes(t) ? 2 : 0) + (title.includes(t) ? 3 : 0) + (description.includes(t) ? 1 : 0);
    if (score === 0) return;
    if (terms.length > 1 && (words(title).join(" ").includes(phrase) || words(url).join(" ").includes(phrase))) score += 5;
    scored.push({ link, score, i });
  });
  return scored.sort((a, b) => b.score - a.score || a.i - b.i).map((s) => s.link);
}

function decodeSafe(url: string): string {
  try {
    return decodeURI(url);
  } catch {
    return url;
  }
}
