// POST /v2/map on the PostgreSQL manual served with its ~1,170-URL sitemap (embedded Trawl through the API), and
// the measurement behind where search's own index lives in cluster mode: ClickHouse candidate query + BM25 in the
// API vs an in-memory inverted index built from crawl.pages, over the same 10,000 stored documents.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { start, ROLES } from "../app/start.ts";
import { convertPage } from "../pipeline/convert/document.ts";
import { parseSitemap } from "../pipeline/fetch-render/sitemaps.ts";
import { loadConfig } from "../pipeline/runtime/config.ts";
import { createLogger } from "../pipeline/runtime/logger.ts";
import { headingsOf, rankBm25, tokens } from "../pipeline/search/bm25.ts";
import { ClickHouseClient } from "../pipeline/store/clickhouse.ts";
import { ClickHouseCrawlStore } from "../pipeline/store/clickhouse-crawl-store.ts";
import type { DocumentRow } from "../pipeline/store/crawl-store.ts";
import { EmbeddedCrawlStore } from "../pipeline/store/embedded-crawl-store.ts";
import { migrate } from "../pipeline/store/migrations.ts";
import { raw } from "../pipeline/store/sql.ts";
import { LinkSet, rankLinks } from "../pipeline/usecases/map-rank.ts";
import { inScope } from "../pipeline/url/scope.ts";
import { ensurePostgresManual, htmlFiles, serveDirectory } from "./corpus.ts";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await fn();
  return [Math.round((performance.now() - t) * 10) / 10, r];
}
const QUERIES = ["vacuum freeze", "create index concurrently", "logical replication slot", "jsonb operators", "pg_stat_activity"];
const DOCS = 10_000;

async function mapBench(dir: string) {
  const site = await serveDirectory(dir);
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
  const config = loadConfig(process.env, { mode: "embedded", dataDir, host: "127.0.0.1", port: 0, allowPrivateCrawlTargets: true, logLevel: "error" });
  const running = await start(ROLES, config, createLogger("error"));
  const api = `http://127.0.0.1:${(running.server?.address() as AddressInfo).port}`;
  const map = (body: object) => fetch(`${api}/v2/map`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: `${site.origin}/docs/`, ...body }) }).then((r) => r.json() as Promise<{ links: unknown[] }>);
  const runs = async (body: object, n: number) => {
    const ms: number[] = [];
    let links = 0;
    for (let i = 0; i < n; i++) {
      const [t, r] = await timed(() => map(body));
      ms.push(t);
      links = r.links.length;
    }
    return { medianMs: median(ms), links };
  };
  const sitemapOnly = await runs({ sitemap: "only" }, 5);
  const include = await runs({}, 3);
  const search = await runs({ search: "vacuum" }, 3);
  // the list work after the sitemap is fetched: parse, scope, dedup, rank
  const xml = await (await fetch(`${site.origin}/sitemap.xml`)).text();
  const listMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const set = new LinkSet(true);
    const start = `${site.origin}/docs/`;
    for (const url of parseSitemap(xml).locs) if (inScope(start, url, { crawlEntireDomain: true, allowSubdomains: true }) === "ok") set.add({ url });
    rankLinks(set.links(), "vacuum");
    listMs.push(performance.now() - t);
  }
  await running.stop();
  await site.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { sitemapUrls: htmlFiles(dir).length, sitemapOnly, include, search, listAfterSitemapMedianMs: Math.round(median(listMs) * 10) / 10 };
}

function corpus(dir: string): DocumentRow[] {
  const base = htmlFiles(dir).map((f) => {
    const url = `http://pg.test/docs/${f}`;
    const { document } = convertPage({ url, finalUrl: url, statusCode: 200, contentType: "text/html", body: readFileSync(join(dir, f), "utf8"), scrapeId: randomUUID() }, { formats: ["markdown"], onlyMainContent: true });
    return { url, doc: document };
  });
  const rows: DocumentRow[] = [];
  for (let i = 0; rows.length < DOCS; i++) {
    const { url, doc } = base[i % base.length] as (typeof base)[number];
    const copy = Math.floor(i / base.length);
    const u = copy ? `${url}?copy=${copy}` : url;
    const text = JSON.stringify({ ...doc, metadata: { ...doc.metadata, url: u, sourceURL: u } });
    rows.push({ crawlId: `scrape:bench-${copy}-${i}`, seq: i, urlKey: u, finalKey: u, scrapeId: randomUUID(), url: u, statusCode: 200, credits: 1, storedAt: Date.now(), doc: text });
  }
  return rows;
}

async function storeSearch(store: { searchCandidates: ClickHouseCrawlStore["searchCandidates"] }) {
  const ms: number[] = [];
  for (const q of QUERIES) {
    const terms = [...new Set(tokens(q))];
    const [t] = await timed(async () => {
      // one retry: the ClickHouse client may reuse a keep-alive socket the server already closed
      const found = await store.searchCandidates("bypass", terms, 0, 300).catch(() => store.searchCandidates("bypass", terms, 0, 300));
      const docs = found.docs.map((d) => JSON.parse(d)).map((d) => ({ url: d.metadata.url, title: d.metadata.title ?? "", description: "", headings: headingsOf(d.markdown ?? ""), markdown: d.markdown ?? "" }));
      return rankBm25(docs, terms, found.corpus, found.df).slice(0, 10);
    });
    ms.push(t);
  }
  return { medianMs: median(ms), maxMs: Math.max(...ms) };
}

function inMemoryIndex(rows: DocumentRow[]) {
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const postings = new Map<string, Map<number, number>>();
  rows.forEach((r, id) => {
    const d = JSON.parse(r.doc);
    const text = `${d.metadata.title ?? ""} ${headingsOf(d.markdown ?? "")} ${d.markdown ?? ""}`;
    for (const t of tokens(text)) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = new Map()));
      p.set(id, (p.get(id) ?? 0) + 1);
    }
  });
  const buildMs = Math.round(performance.now() - t0);
  global.gc?.();
  const heapMB = Math.round((process.memoryUsage().heapUsed - heap0) / 1e6);
  const ms: number[] = [];
  for (const q of QUERIES) {
    const t = performance.now();
    const scores = new Map<number, number>();
    for (const term of tokens(q)) for (const [id, tf] of postings.get(term) ?? []) scores.set(id, (scores.get(id) ?? 0) + tf);
    [...scores.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10);
    ms.push(performance.now() - t);
  }
  return { buildMs, heapMB, terms: postings.size, queryMedianMs: Math.round(median(ms) * 10) / 10 };
}

async function indexBench(dir: string) {
  const rows = corpus(dir);
  const bytes = rows.reduce((s, r) => s + r.doc.length, 0);
  const ch = new ClickHouseClient({ url: process.env.CLICKHOUSE_URL ?? "http://127.0.0.1:18123", user: "default", password: "", database: `trawl_bench_${randomBytes(3).toString("hex")}` });
  await migrate(ch);
  const clickhouse = new ClickHouseCrawlStore(ch);
  for (let i = 0; i < rows.length; i += 1000) await clickhouse.insertDocuments(rows.slice(i, i + 1000));
  const chResult = await storeSearch(clickhouse);
  await ch.exec(raw(`DROP DATABASE IF EXISTS ${ch.database}`));
  const dataDir = mkdtempSync(join(tmpdir(), "trawl-bench-"));
  const embedded = await EmbeddedCrawlStore.open(dataDir, Date.now());
  for (let i = 0; i < rows.length; i += 1000) await embedded.insertDocuments(rows.slice(i, i + 1000));
  const embResult = await storeSearch(embedded);
  await embedded.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { documents: rows.length, documentMB: Math.round(bytes / 1e6), clickhouseQueryPlusBm25: chResult, embeddedScanPlusBm25: embResult, inMemoryInvertedIndex: inMemoryIndex(rows) };
}

const dir = ensurePostgresManual();
const result = { map: await mapBench(dir), searchIndex: await indexBench(dir) };
console.log(JSON.stringify(result));
process.exit(0);
