// The PostgreSQL 15 manual (Debian's postgresql-doc-15: ~1,170 HTML pages, ~16 MB), installed when missing and
// served by a static server on loopback with a sitemap.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize } from "node:path";

export const PG_DOCS = "/usr/share/doc/postgresql-doc-15/html";

export function ensurePostgresManual(): string {
  if (existsSync(join(PG_DOCS, "index.html"))) return PG_DOCS;
  if (process.getuid?.() !== 0) throw new Error(`${PG_DOCS} is missing: apt-get install postgresql-doc-15 (as root)`);
  execFileSync("apt-get", ["install", "-y", "-q", "postgresql-doc-15"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return PG_DOCS;
}

export const PYTHON_DOCS = "/usr/share/doc/python3.11/html";

/** Debian's python3.11-doc (the Python 3.11 documentation, ~500 HTML pages), installed when missing. */
export function ensurePythonDocs(): string {
  if (existsSync(join(PYTHON_DOCS, "index.html"))) return PYTHON_DOCS;
  if (process.getuid?.() !== 0) throw new Error(`${PYTHON_DOCS} is missing: apt-get install python3.11-doc (as root)`);
  execFileSync("apt-get", ["install", "-y", "-q", "--no-install-recommends", "python3.11-doc"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  return PYTHON_DOCS;
}

/** Every .html file under `dir`, recursively (paths relative to dir), skipping `_`-prefixed folders (assets, sources). */
export function htmlFilesDeep(dir: string, sub = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
    const rel = sub ? `${sub}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith("_")) out.push(...htmlFilesDeep(dir, rel));
    } else if (entry.name.endsWith(".html")) out.push(rel);
  }
  return out.sort();
}

export function htmlFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => f.endsWith(".html")).sort();
}

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".css": "text/css", ".svg": "image/svg+xml", ".png": "image/png", ".xml": "application/xml" };

export interface StaticSite {
  origin: string;
  server: Server;
  close(): Promise<void>;
  /** With `limit`: the answers given so far, by status (200, 429, ...). */
  answered?: Record<number, number>;
}

/** A host that rate-limits: past `inFlight` requests being served at once it answers 429 with `Retry-After: 1` at
 * once; each request it serves takes `delayMs` (the work of a real server, so that concurrency is what it limits). */
export interface SiteLimit {
  inFlight: number;
  delayMs: number;
}

/** `BENCH_SITE_LIMIT=<inFlight>:<delayMs>` (e.g. `6:20`), or undefined. */
export function siteLimitFrom(text: string | undefined): SiteLimit | undefined {
  if (!text) return undefined;
  const [inFlight, delayMs] = text.split(":").map(Number);
  if (!Number.isInteger(inFlight) || (inFlight as number) < 1 || !Number.isFinite(delayMs) || (delayMs as number) < 0) throw new Error(`BENCH_SITE_LIMIT=${text}: expected <inFlight>:<delayMs>, e.g. 6:20`);
  return { inFlight: inFlight as number, delayMs: delayMs as number };
}

/**
 * Serves `dir` under /docs/ with /sitemap.xml listing every HTML page. `validators`: ETag and Last-Modified from the
 * file's size and time, and 304 to a matching If-None-Match (as nginx does for static files).
 */
export async function serveDirectory(dir: string, opts: { validators?: boolean; limit?: SiteLimit } = {}): Promise<StaticSite> {
  let origin = "";
  const answered: Record<number, number> = {};
  let inFlight = 0;
  const limit = opts.limit;
  const server = createServer((req, res) => {
    if (limit) {
      res.on("finish", () => {
        answered[res.statusCode] = (answered[res.statusCode] ?? 0) + 1;
      });
      if (inFlight >= limit.inFlight) {
        res.writeHead(429, { "retry-after": "1", "content-type": "text/plain" }).end("Too many requests");
        return;
      }
      inFlight++;
      res.on("close", () => inFlight--);
      setTimeout(() => serve(req, res), limit.delayMs);
      return;
    }
    serve(req, res);
  });
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    if (path === "/sitemap.xml") {
      const urls = htmlFiles(dir).map((f) => `<url><loc>${origin}/docs/${f}</loc></url>`).join("");
      res.writeHead(200, { "content-type": "application/xml" }).end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
      return;
    }
    if (path === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
      return;
    }
    const rel = path === "/docs/" ? "index.html" : path.replace(/^\/docs\//, "");
    const file = normalize(join(dir, rel));
    if (!path.startsWith("/docs/") || !file.startsWith(dir) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { "content-type": "text/html" }).end("<h1>Not found</h1>");
      return;
    }
    if (opts.validators) {
      const st = statSync(file);
      const etag = `"${Math.floor(st.mtimeMs / 1000).toString(16)}-${st.size.toString(16)}"`;
      if (req.headers["if-none-match"] === etag) {
        res.writeHead(304, { etag }).end();
        return;
      }
      res.setHeader("etag", etag);
      res.setHeader("last-modified", st.mtime.toUTCString());
    }
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" }).end(readFileSync(file));
  };
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, server, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }), ...(limit ? { answered } : {}) };
}
