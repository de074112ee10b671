// Convert stage vs plain turndown on the PostgreSQL manual: MB/s and ms/page (p50, p99) of each, same pages.
// Ours = the full conversion of a crawled page (parse5 parse, metadata, links, main content, markdown).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import TurndownService from "turndown";
import { convertPage } from "../pipeline/convert/document.ts";
import { ensurePostgresManual, htmlFiles } from "./corpus.ts";

const dir = ensurePostgresManual();
const pages = htmlFiles(dir).map((f) => ({ url: `http://127.0.0.1/docs/${f}`, html: readFileSync(join(dir, f), "utf8") }));
const totalBytes = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0);

function run(name: string, fn: (html: string, url: string) => void) {
  for (const p of pages.slice(0, 50)) fn(p.html, p.url); // warm-up
  const times: number[] = [];
  const t0 = performance.now();
  for (const p of pages) {
    const t = performance.now();
    fn(p.html, p.url);
    times.push(performance.now() - t);
  }
  const secs = (performance.now() - t0) / 1000;
  times.sort((a, b) => a - b);
  const q = (x: number) => +(times[Math.min(times.length - 1, Math.floor(x * times.length))] as number).toFixed(2);
  return { name, pages: pages.length, mb: +(totalBytes / 1e6).toFixed(1), mbPerSecond: +(totalBytes / 1e6 / secs).toFixed(2), p50Ms: q(0.5), p99Ms: q(0.99) };
}

const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
const turndown = run("plain turndown", (html) => td.turndown(html));
const ours = run("trawl convert", (html, url) => convertPage({ url, finalUrl: url, statusCode: 200, contentType: "text/html", body: html, scrapeId: "b" }, { formats: ["markdown"], onlyMainContent: true }));
console.log(JSON.stringify({ ours, turndown, target: "ours >= 30 MB/s per core", met: ours.mbPerSecond >= 30, ratio: +(ours.mbPerSecond / turndown.mbPerSecond).toFixed(2) }));
