// A deterministic synthetic site for scale runs: N pages under /site/, each ~8-40 KB of HTML with a nav bar,
// paragraphs, a table, code, and links to its children in a tree plus a few pseudo-random cross links.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

const WORDS = "crawl frontier partition offset broker document markdown table render schema stream index query page link node".split(" ");

/** `seed`: another site's pages (the many-host site gives each host its own). `extraLinks`: absolute links listed too. */
export function syntheticPage(i: number, pages: number, fanout = 8, seed = 0, extraLinks: string[] = []): string {
  const r = rng(i + 1 + seed * 7919);
  const para = () => Array.from({ length: 40 + Math.floor(r() * 80) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(" ");
  const children = Array.from({ length: fanout }, (_, k) => i * fanout + k + 1).filter((c) => c < pages);
  const cross = Array.from({ length: 3 }, () => Math.floor(r() * pages));
  const links = [...children, ...cross].map((c) => `<li><a href="/site/p${c}.html">Page ${c}</a></li>`).join("") + extraLinks.map((href) => `<li><a href="${href}">${href}</a></li>`).join("");
  const paragraphs = Array.from({ length: 3 + Math.floor(r() * 10) }, () => `<p>${para()}</p>`).join("\n");
  const rows = Array.from({ length: 5 }, (_, k) => `<tr><td>${k}</td><td>${WORDS[k]}</td><td>${Math.floor(r() * 1000)}</td></tr>`).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${i}</title>
<meta name="description" content="Synthetic page ${i}"></head><body>
<header><nav><a href="/site/p0.html">Home</a> <a href="/site/p1.html">Docs</a></nav></header>
<main><h1>Page ${i}</h1>${paragraphs}<table><thead><tr><th>n</th><th>word</th><th>value</th></tr></thead><tbody>${rows}</tbody></table>
<pre><code class="language-ts">const page = ${i};</code></pre><ul>${links}</ul></main><footer>Synthetic footer</footer></body></html>`;
}

export interface SyntheticSite {
  origin: string;
  server: Server;
  close(): Promise<void>;
}

export async function startSyntheticSite(pages: number): Promise<SyntheticSite> {
  const server = createServer((req, res) => {
    const m = /^\/site\/p(\d+)\.html$/.exec(req.url ?? "");
    const i = m ? Number(m[1]) : -1;
    if (i < 0 || i >= pages) {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>404</h1>");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(syntheticPage(i, pages));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    server,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The many-host site's host names resolve through Trawl's RESOLVE (host:address pairs), like curl --resolve. */
export const manyHostName = (k: number) => `h${k}.site.test`;

/** Hosts whose first page host `k`'s first page links: every other host from host 0 when there are at most
 * HUB_FANOUT (the start page links every host), else a tree of HUB_FANOUT links a hub (depth 2 for a million hosts). */
const HUB_FANOUT = 1000;
export function hubLinks(k: number, hosts: number): number[] {
  if (hosts <= HUB_FANOUT + 1) return k === 0 ? Array.from({ length: hosts - 1 }, (_, j) => j + 1) : [];
  return Array.from({ length: HUB_FANOUT }, (_, j) => k * HUB_FANOUT + j + 1).filter((h) => h < hosts);
}

export interface ManyHostSite extends SyntheticSite {
  /** the crawl's start page: host 0's first page, which links every other host's first page */
  start: string;
  /** Trawl's RESOLVE setting: every host name on 127.0.0.1 */
  resolve: string;
  /** requests answered, by host index (a host's robots.txt and sitemap included) */
  requestsPerHost: Uint32Array;
  /** requests of pages: every page's first, and the ones after (a page asked again: a retry, a duplicate) */
  pageRequests(): { distinct: number; repeated: number };
}

/**
 * A synthetic web of `hosts` hosts (`h0.site.test` ... on one loopback server, told apart by the Host header) with
 * `pages / hosts` pages each, the synthetic site's tree on every host (own contents per host); host 0's first page
 * (the start) also links every other host's first page (`hubLinks`). A crawl with `allowSubdomains` reaches all of
 * them: `pages` pages exactly. `onRequest`: told of every request (host index, -1 for an unknown host; path), before the
 * answer (a page's answer waits for the promise it returns: a hold); `delayMs`: each page answered that much later (a site slower than the fetchers).
 */
export async function startManyHostSite(pages: number, hosts: number, opts: { onRequest?: (host: number, path: string) => void | Promise<void>; delayMs?: number } = {}): Promise<ManyHostSite> {
  if (!Number.isInteger(pages / hosts) || hosts < 1) throw new Error(`pages (${pages}) must be a multiple of hosts (${hosts})`);
  // Linux refuses one environment string over 128 KiB (MAX_ARG_STRLEN): RESOLVE holds ~5,000 hosts at most
  if (hosts > 5000) throw new Error(`${hosts} hosts do not fit in RESOLVE (one environment string, 128 KiB at most: ~5,000 hosts); RESOLVE has no wildcard yet`);
  const perHost = pages / hosts;
  const requestsPerHost = new Uint32Array(hosts);
  const served = new Uint8Array(pages); // host k's page i at k * perHost + i
  let repeated = 0;
  let distinct = 0;
  let port = 0;
  const server = createServer((req, res) => {
    const hostHeader = (req.headers.host ?? "").toLowerCase();
    const h = /^h(\d+)\.site\.test(?::\d+)?$/.exec(hostHeader);
    const k = h ? Number(h[1]) : -1;
    if (k >= 0 && k < hosts) requestsPerHost[k] = (requestsPerHost[k] ?? 0) + 1;
    const gate = opts.onRequest?.(k, req.url ?? "");
    const m = /^\/site\/p(\d+)\.html$/.exec(req.url ?? "");
    const i = m ? Number(m[1]) : -1;
    if (k < 0 || k >= hosts || i < 0 || i >= perHost) {
      res.writeHead(404, { "content-type": "text/html" });
      res.end("<h1>404</h1>");
      return;
    }
    if (served[k * perHost + i]) repeated++;
    else {
      served[k * perHost + i] = 1;
      distinct++;
    }
    const extra = i === 0 ? hubLinks(k, hosts).map((j) => `http://${manyHostName(j)}:${port}/site/p0.html`) : [];
    const answer = () => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(syntheticPage(i, perHost, 8, k, extra));
    };
    const later = () => (opts.delayMs ? setTimeout(answer, opts.delayMs) : answer());
    if (gate) void gate.then(later);
    else later();
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  return {
    origin: `http://${manyHostName(0)}:${port}`,
    start: `http://${manyHostName(0)}:${port}/site/p0.html`,
    resolve: Array.from({ length: hosts }, (_, k) => `${manyHostName(k)}:127.0.0.1`).join(","),
    requestsPerHost,
    pageRequests: () => ({ distinct, repeated }),
    server,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
