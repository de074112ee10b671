// The search port: where POST /v2/search gets its results (a SearXNG instance, or Trawl's own stored documents).

export interface SearchHit {
  url: string;
  title?: string;
  description?: string;
}

export interface SearchQuery {
  query: string;
  limit: number;
  timeoutMs: number;
  /** whose documents Trawl's own index searches */
  teamId: string;
}

export interface SearchBackend {
  /** Named in the response's `warning`. */
  readonly name: string;
  search(q: SearchQuery): Promise<SearchHit[]>;
}
