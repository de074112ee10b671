// Trawl's own index: the documents it stored (crawls and scrapes within retention), ranked with BM25 over title,
// headings and markdown. The store narrows the corpus to documents containing a query term (ClickHouse does it
// in SQL, the embedded store by a scan) and gives the document frequencies; ranking happens here.
import { RETENTION_MS } from "../runtime/constants.ts";
import type { CrawlStore } from "../store/crawl-store.ts";
import { headingsOf, rankBm25, snippet, tokens, type IndexedDoc } from "./bm25.ts";
import type { SearchBackend, SearchHit, SearchQuery } from "./search-backend.ts";

/** Candidates ranked per query (those with most query terms, newest first): transferring them dominates the cost in cluster mode (bench map-search). */
const MAX_CANDIDATES = 300;
const MAX_TERMS = 16;

interface StoredDoc {
  markdown?: string;
  metadata?: { title?: unknown; description?: unknown; url?: unknown; sourceURL?: unknown; statusCode?: unknown };
}

export class IndexBackend implements SearchBackend {
  readonly name = "trawl-index";
  private readonly store: CrawlStore;
  private readonly now: () => number;

  constructor(store: CrawlStore, now: () => number) {
    this.store = store;
    this.now = now;
  }

  async search(q: SearchQuery): Promise<SearchHit[]> {
    const terms = [...new Set(tokens(q.query))].slice(0, MAX_TERMS);
    if (terms.length === 0) return [];
    const found = await this.store.searchCandidates(q.teamId, terms, this.now() - RETENTION_MS, MAX_CANDIDATES);
    const docs = found.docs.map(parseDoc).filter((d): d is IndexedDoc => d !== null);
    const seen = new Set<string>();
    const hits: SearchHit[] = [];
    for (const { item } of rankBm25(docs, terms, found.corpus, found.df)) {
      if (seen.has(item.url)) continue;
      seen.add(item.url);
      hits.push({ url: item.url, title: item.title, description: item.description || snippet(item.markdown, terms) });
      if (hits.length >= q.limit) break;
    }
    return hits;
  }
}

function parseDoc(text: string): IndexedDoc | null {
  let doc: StoredDoc;
  try {
    doc = JSON.parse(text);
  } catch {
    return null; // a stored row is always JSON; a torn one is not a result
  }
  const m = doc.metadata ?? {};
  if (typeof m.statusCode === "number" && m.statusCode >= 400) return null;
  const url = typeof m.url === "string" ? m.url : typeof m.sourceURL === "string" ? m.sourceURL : null;
  if (!url) return null;
  const markdown = typeof doc.markdown === "string" ? doc.markdown : "";
  return { url, title: typeof m.title === "string" ? m.title : "", description: typeof m.description === "string" ? m.description : "", headings: headingsOf(markdown), markdown };
}
