// The one URL normaliser: how a discovered href becomes a fetchable URL, and how a URL becomes its dedup key.

export interface ResolvedHref {
  /** absolute URL as a browser would follow it (the written value when it does not parse) */
  absolute: string;
  /** the same as a crawlable link: http(s) with a host, no fragment, no credentials; null for mailto:, javascript:, ... */
  link: string | null;
}

/** Resolves an href once for both uses: the page's absolute URLs and the crawl's links. */
export function resolveHref(href: string, base?: string): ResolvedHref {
  let u: URL;
  try {
    u = base === undefined ? new URL(href.trim()) : new URL(href.trim(), base);
  } catch {
    return { absolute: href, link: null };
  }
  const absolute = u.href;
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) return { absolute, link: null };
  if (!u.username && !u.password) {
    // a serialised URL has one literal '#': where its fragment starts (the other parts percent-encode it)
    const hash = absolute.indexOf("#");
    return { absolute, link: hash < 0 ? absolute : absolute.slice(0, hash) };
  }
  // each setter re-serialises the URL: only touch what is there
  if (u.hash) u.hash = "";
  u.username = "";
  u.password = "";
  return { absolute, link: u.href };
}

/** characters a fragment keeps as written (no percent-encoding): printable ASCII except space, ", <, >, ` */
const PLAIN_FRAGMENT = /^#[\x21\x23-\x3b\x3d\x3f-\x5f\x61-\x7e]*$/;

/**
 * A path-relative href that needs no URL parser: `../` steps, then segments of letters, digits, `_`, `-`, `.` that
 * do not start with a dot (so no dot-segments, no percent-encoding, nothing to escape).
 */
const SIMPLE_RELATIVE = /^(?:\.\.\/)*(?:[A-Za-z0-9_-][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * resolveHref for the hrefs of one page against one base, each distinct value resolved once; `page.html#a` and
 * `page.html#b` share the resolution of `page.html` (pages link to many anchors of a few pages), and simple
 * relative paths (`datatype.html`, `../library/os.html`) are joined to the base's directory without a URL parse.
 */
export class HrefResolver {
  readonly base: string;
  private readonly cache = new Map<string, ResolvedHref>();
  /** origin and the directory segments of an http(s) base without credentials; null when not that (undefined: not yet known) */
  private dir: { origin: string; segments: string[] } | null | undefined;

  constructor(base: string) {
    this.base = base;
  }

  /** `href` (matching SIMPLE_RELATIVE) against the base directory, as the URL parser would resolve it; null when the base is not plain http(s). */
  private joinSimple(href: string): string | null {
    if (this.dir === undefined) {
      let u: URL | undefined;
      try {
        u = new URL(this.base);
      } catch {
        u = undefined;
      }
      this.dir = u && (u.protocol === "http:" || u.protocol === "https:") && u.hostname && !u.username && !u.password
        ? { origin: `${u.protocol}//${u.host}`, segments: u.pathname.split("/").slice(1, -1) }
        : null;
    }
    if (this.dir === null) return null;
    let up = 0;
    while (href.startsWith("../", up * 3)) up++;
    const segments = this.dir.segments;
    const kept = segments.slice(0, Math.max(0, segments.length - up));
    return `${this.dir.origin}/${kept.length ? kept.join("/") + "/" : ""}${href.slice(up * 3)}`;
  }

  resolve(href: string): ResolvedHref {
    const hash = href.indexOf("#");
    // (whitespace before the '#' would be trimmed from the part alone, not from the whole: resolved in full)
    if (hash > 0 && href.charCodeAt(hash - 1) > 32) {
      // page.html#anchor: the target's resolution plus the fragment as written (not cached: anchors are many, each
      // seen once or twice); a fragment that needs encoding, or a target with credentials or not http(s), in full
      const fragment = href.slice(hash);
      if (PLAIN_FRAGMENT.test(fragment)) {
        const target = this.resolveWhole(href.slice(0, hash));
        if (target.link !== null && target.link === target.absolute) return { absolute: target.absolute + fragment, link: target.link };
      }
    }
    return this.resolveWhole(href);
  }

  /** `resolve(href).link` without building the absolute URL: the fragment is dropped before resolving. */
  link(href: string): string | null {
    const hash = href.indexOf("#");
    if (hash > 0 && href.charCodeAt(hash - 1) > 32) return this.resolveWhole(href.slice(0, hash)).link;
    return this.resolve(href).link;
  }

  private resolveWhole(href: string): ResolvedHref {
    let r = this.cache.get(href);
    if (r === undefined) {
      const joined = SIMPLE_RELATIVE.test(href) ? this.joinSimple(href) : null;
      r = joined !== null ? { absolute: joined, link: joined } : resolveHref(href, this.base);
      this.cache.set(href, r);
    }
    return r;
  }
}

/** Resolves `href` against `base`; only http(s); the fragment is dropped. Null when unusable. */
export function resolveLink(href: string, base?: string): string | null {
  return href.trim() ? resolveHref(href, base).link : null;
}

export interface KeyOptions {
  /** Merge www./bare host, http/https, trailing slash and index.html/index.php (default true). */
  deduplicateSimilarURLs?: boolean;
  /** Drop the whole query string. */
  ignoreQueryParameters?: boolean;
}

const INDEX_FILE = /\/index\.(html?|php)$/i;

/** The dedup key of a URL (already resolved). Two URLs with the same key are the same page for a crawl. */
export function urlKey(url: string, opts: KeyOptions = {}): string {
  const u = new URL(url);
  u.hash = "";
  // sort query parameters so that ?a=1&b=2 and ?b=2&a=1 are one page
  const params = [...u.searchParams.entries()].sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1));
  const query = opts.ignoreQueryParameters || params.length === 0 ? "" : "?" + new URLSearchParams(params).toString();
  if (opts.deduplicateSimilarURLs === false) {
    return `${u.protocol}//${u.host}${u.pathname}${query}`;
  }
  const host = u.host.replace(/^www\./, "");
  let path = u.pathname.replace(INDEX_FILE, "/");
  if (path.length > 1) path = path.replace(/\/+$/, "");
  if (path === "/") path = "";
  return `${host}${path}${query}`;
}

/** The dedup key of a URL under a crawl's options, as a flat string (the frontier keeps one per URL in memory). */
export function crawlUrlKey(url: string, options: KeyOptions): string {
  const key = urlKey(url, { deduplicateSimilarURLs: options.deduplicateSimilarURLs ?? true, ignoreQueryParameters: options.ignoreQueryParameters ?? false });
  // concatenation yields a rope (a cons string, ~2x the bytes); a round trip through UTF-8 makes it one flat string
  return Buffer.from(key, "utf8").toString("utf8");
}
