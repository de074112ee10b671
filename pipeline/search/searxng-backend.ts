// SearXNG's JSON API (GET <endpoint>/search?q=...&format=json&pageno=N), as Firecrawl's self-hosted search uses it.
// The endpoint is the operator's own setting, so the private-address rule for crawl targets does not apply to it.
import { request } from "undici";
import { PageError } from "../runtime/errors.ts";
import type { SearchBackend, SearchHit, SearchQuery } from "./search-backend.ts";

interface SearxResult {
  url?: unknown;
  title?: unknown;
  content?: unknown;
}

/** At most this many result pages per search (SearXNG answers about 10 results per page). */
const MAX_PAGES = 5;

export class SearxngBackend implements SearchBackend {
  readonly name = "searxng";
  private readonly endpoint: string;
  private readonly engines: string;
  private readonly categories: string;

  constructor(opts: { endpoint: string; engines: string; categories: string }) {
    this.endpoint = opts.endpoint.replace(/\/+$/, "");
    this.engines = opts.engines;
    this.categories = opts.categories;
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const signal = AbortSignal.timeout(q.timeoutMs);
    const hits: SearchHit[] = [];
    const seen = new Set<string>();
    for (let page = 1; page <= MAX_PAGES && hits.length < q.limit; page++) {
      const results = await this.page(q.query, page, signal);
      let added = 0;
      for (const r of results) {
        if (typeof r.url !== "string" || seen.has(r.url)) continue;
        seen.add(r.url);
        added++;
        hits.push({ url: r.url, ...(typeof r.title === "string" ? { title: r.title } : {}), ...(typeof r.content === "string" ? { description: r.content } : {}) });
      }
      if (added === 0) break;
    }
    return hits.slice(0, q.limit);
  }

  private async page(query: string, pageno: number, signal: AbortSignal): Promise<SearxResult[]> {
    const params = new URLSearchParams({ q: query, format: "json", pageno: String(pageno) });
    if (this.engines) params.set("engines", this.engines);
    if (this.categories) params.set("categories", this.categories);
    let status: number;
    let text: string;
    try {
      const res = await request(`${this.endpoint}/search?${params}`, { method: "GET", signal, headers: { accept: "application/json" } });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      const timeout = (err as Error).name === "TimeoutError" || (err as Error).name === "AbortError";
      throw new PageError(timeout ? "SEARCH_TIMEOUT" : "SEARCH_BACKEND_ERROR", `SearXNG at ${this.endpoint}: ${(err as Error).message}`, { cause: err });
    }
    if (status !== 200) throw new PageError("SEARCH_BACKEND_ERROR", `SearXNG at ${this.endpoint} answered HTTP ${status}`, { statusCode: status });
    let body: { results?: unknown };
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new PageError("SEARCH_BACKEND_ERROR", `SearXNG at ${this.endpoint} did not answer JSON (is format=json enabled in its settings.yml?)`, { cause: err });
    }
    return Array.isArray(body.results) ? (body.results as SearxResult[]) : [];
  }
}
