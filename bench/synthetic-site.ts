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

export function syntheticPage(i: number, pages: number, fanout = 8): string {
  const r = rng(i + 1);
  const para = () => Array.from({ length: 40 + Math.floor(r() * 80) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(" ");
  const children = Array.from({ length: fanout }, (_, k) => i * fanout + k + 1).filter((c) => c < pages);
  const cross = Array.from({ length: 3 }, () => Math.floor(r() * pages));
  const links = [...children, ...cross].map((c) => `<li><a href="/site/p${c}.html">Page ${c}</a></li>`).join("");
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
