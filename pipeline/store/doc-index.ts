// The embedded store's in-memory index of one crawl's documents (where each sits in the document segments).

export interface DocRef {
  storedAt?: number;
  seq: number;
  urlKey: string;
  finalKey: string;
  /** the segment file the document is in (doc-segments.ts) */
  seg: number;
  pos: number;
  len: number;
  /** the document's JSON sits at [pos + docStart, pos + len) of its line */
  docStart: number;
}

/**
 * One crawl's stored documents in seq order (one sink per crawl assigns increasing seqs), a column per field: an
 * object per document took ~105 bytes of heap, the columns take ~40-50 (the per-URL indexes are what the embedded
 * process's heap grows with over a long crawl, bench/README.md). The first row of a url key wins.
 */
export class DocIndex {
  readonly keys = new Set<string>();
  readonly seq: number[] = [];
  readonly seg: number[] = [];
  readonly pos: number[] = [];
  readonly len: number[] = [];
  readonly docStart: number[] = [];
  /** NaN: not recorded (lines written before documents carried it) */
  readonly storedAt: number[] = [];
  readonly finalKey: string[] = [];

  get size(): number {
    return this.seq.length;
  }

  add(ref: DocRef): void {
    if (this.keys.has(ref.urlKey)) return;
    this.keys.add(ref.urlKey);
    this.seq.push(ref.seq);
    this.seg.push(ref.seg);
    this.pos.push(ref.pos);
    this.len.push(ref.len);
    this.docStart.push(ref.docStart);
    this.storedAt.push(ref.storedAt ?? NaN);
    this.finalKey.push(ref.finalKey);
  }

  /** The first row whose seq is at least `seq` (binary search). */
  firstAtLeast(seq: number): number {
    let lo = 0;
    let hi = this.seq.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.seq[mid] as number) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** when row i was stored (`absent` if not recorded) */
  storedAtOf(i: number, absent = 0): number {
    const at = this.storedAt[i] as number;
    return Number.isNaN(at) ? absent : at;
  }
}
