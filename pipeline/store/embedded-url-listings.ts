// The embedded store's URL listings (GET /v2/crawl/:id/urls): kept on disk (url-listing.ts) and built off the request
// path (url-listing-build.ts), one build of a crawl at a time, shared by every reader that waits for it.
// - A finished crawl's is built when it finishes (the store calls `finished`), so its first reader does not build it
//   (a million URLs: 17 s for the first page when the first reader did); a reader that comes during the build waits
//   for that build, and one whose crawl changed since (a late URL row) for the next.
// - A running crawl's is the latest one built, rebuilt in the background when a reader finds it older than
//   REFRESH_MS and than four times its last build (what the rebuilds cost the crawl stays bounded); only the first
//   reader of a crawl waits for a build. Its pages may lag the crawl by that much.
import type { CrawlRecord, CrawlUrlListings } from "./crawl-store.ts";
import { buildListingItems } from "./url-listing-build.ts";
import type { DiskUrlListings, UrlListing } from "./url-listing.ts";
import type { UrlLogs } from "./url-logs.ts";

/** A running crawl's listing is rebuilt at most this often (and at most every four of its builds' durations). */
export const REFRESH_MS = 5_000;
/** A finished crawl's URL log from this size on is listed when it finishes; smaller ones at their first read. */
export const EAGER_MIN_BYTES = 256 * 1024;

export class EmbeddedUrlListings implements CrawlUrlListings {
  private readonly building = new Map<string, { stamp: string; done: Promise<UrlListing> }>();
  private readonly lastBuild = new Map<string, { at: number; ms: number }>();
  /** Background builds that failed (a reader builds again). */
  failures = 0;

  private readonly disk: DiskUrlListings;
  private readonly logs: UrlLogs;

  constructor(disk: DiskUrlListings, logs: UrlLogs) {
    this.disk = disk;
    this.logs = logs;
  }

  /** What a listing is built for: what its entries depend on (status, reason counts and URL rows). */
  private stamp(c: CrawlRecord): string {
    return `${c.status}:${this.logs.sizeOf(c.crawlId)}:${JSON.stringify(c.reasons ?? {})}`;
  }

  open(c: CrawlRecord): UrlListing | null {
    return this.disk.open(c.crawlId, this.stamp(c));
  }

  async listing(c: CrawlRecord): Promise<UrlListing> {
    const stamp = this.stamp(c);
    const exact = this.disk.open(c.crawlId, stamp);
    if (exact) return exact;
    if (c.status !== "scraping") return this.build(c, stamp);
    const latest = this.disk.open(c.crawlId, null);
    const running = this.building.get(c.crawlId);
    if (running) return latest ?? running.done;
    const last = this.lastBuild.get(c.crawlId);
    if (latest && last && performance.now() - last.at < Math.max(REFRESH_MS, 4 * last.ms)) return latest;
    const next = this.build(c, stamp);
    if (!latest) return next;
    next.catch(() => this.failures++);
    return latest;
  }

  /** The crawl ended: its listing is built now, in the background, if its URL log is large enough to matter. */
  finished(c: CrawlRecord): void {
    if (this.logs.sizeOf(c.crawlId) < EAGER_MIN_BYTES) return;
    this.listing(c).catch(() => this.failures++);
  }

  /** The crawl's listing for `stamp`: the build under way for it, or one started after the one under way. */
  private build(c: CrawlRecord, stamp: string): Promise<UrlListing> {
    const id = c.crawlId;
    const current = this.building.get(id);
    if (current?.stamp === stamp) return current.done;
    const before = current ? current.done.then(() => undefined, () => undefined) : Promise.resolve();
    const done = before.then(async () => {
      const built = this.disk.open(id, stamp);
      if (built) return built;
      const t0 = performance.now();
      const { items, unlisted } = await buildListingItems(this.logs.batches(id), c);
      const listing = await this.disk.save(id, stamp, items, unlisted);
      this.lastBuild.set(id, { at: performance.now(), ms: performance.now() - t0 });
      return listing;
    });
    const entry = { stamp, done };
    this.building.set(id, entry);
    const clear = () => {
      if (this.building.get(id) === entry) this.building.delete(id);
    };
    done.then(clear, clear);
    return done;
  }

  /** Deletes a crawl's listing (it expired). */
  remove(crawlId: string): void {
    this.lastBuild.delete(crawlId);
    this.disk.remove(crawlId);
  }

  /** Resolves once every build under way ended (a store closing). */
  async settle(): Promise<void> {
    await Promise.all([...this.building.values()].map((b) => b.done.catch(() => undefined)));
  }
}
