// The page history behind the changeTracking format and conditional fetches: per team, tag and URL key, the last
// snapshot of the page (its document, links, validators and content hash), plus one history entry per job that saw it.
// Snapshots are not results: they outlive the 24 h retention of documents (a recrawl next week compares with them).
// Adapters: EmbeddedSnapshotStore (snapshots.jsonl under the data directory) and ClickHouseSnapshotStore.
import { join } from "node:path";
import { AppendLog, FileReader, readLines } from "../runtime/append-log.ts";
import type { Logger } from "../runtime/logger.ts";
import type { ChangeCounts, ChangeStatus } from "./change-tracking.ts";

export interface Snapshot {
  teamId: string;
  /** the changeTracking format's tag ("" without one): separate histories of one URL */
  tag: string;
  urlKey: string;
  url: string;
  /** the job that took it (crawl, batch or scrape id) */
  crawlId: string;
  /** the crawl's lineage, its start URL's key: the pages a later crawl of it no longer reaches are removed ("" for batches and scrapes) */
  origin: string;
  scrapedAt: number;
  statusCode: number;
  changeStatus: ChangeStatus;
  /** sha256 of the fetched body ("" when unknown: rendered pages) */
  contentHash: string;
  etag: string;
  lastModified: string;
  /** hash of the options the document was made with: it is reused only under the same options */
  optionsHash: string;
  /** the document's JSON (with json, also when it was extracted for change tracking only) */
  doc: string;
  /** the page's links, so that a crawl goes on through a page it did not convert again */
  links: string[];
  /** the changeTracking answered for it (JSON), so that a replay of the same job answers the same */
  tracking: string;
}

export interface SweepRequest {
  teamId: string;
  tag: string;
  origin: string;
  crawlId: string;
  /** URL keys the crawl saw (stored, failed or skipped): not removed */
  reached: Set<string>;
  now: number;
}

export interface SnapshotStore {
  /** The latest snapshot of each URL key in the history of (team, tag). */
  latest(teamId: string, tag: string, urlKeys: string[]): Promise<Map<string, Snapshot>>;
  /** Stores snapshots (durable when it resolves); each also becomes a history entry of its job. */
  put(rows: Snapshot[]): Promise<void>;
  /**
   * The end of a change-tracking crawl: every page of its lineage whose latest snapshot is from an earlier job, not
   * already removed, and that this crawl did not reach gets a tombstone (changeStatus removed, this crawl's id).
   * Returns the crawl's tombstones (also those of an earlier run of the same sweep: a replay answers the same).
   */
  sweepRemoved(req: SweepRequest): Promise<Snapshot[]>;
  /** The pages a crawl's end reported removed (its tombstones). */
  removedBy(teamId: string, tag: string, crawlId: string): Promise<Snapshot[]>;
  /** How many pages the job's snapshots (tombstones included) found new, same, changed and removed (each URL key once). */
  changeCounts(teamId: string, tag: string, crawlId: string): Promise<ChangeCounts>;
  close(): Promise<void>;
}

/** What the embedded store keeps in memory per URL (the document stays on disk). */
interface Entry {
  pos: number;
  len: number;
  scrapedAt: number;
  crawlId: string;
  origin: string;
  changeStatus: ChangeStatus;
}

const keyOf = (teamId: string, tag: string, urlKey: string): string => JSON.stringify([teamId, tag, urlKey]);

/** Embedded mode: snapshots.jsonl under the data directory (every snapshot: the history); memory holds an index. */
export class EmbeddedSnapshotStore implements SnapshotStore {
  private readonly log: AppendLog;
  private reader: FileReader | null = null;
  private readonly index = new Map<string, Entry>();
  /** tombstones by crawl id */
  private readonly removed = new Map<string, Snapshot[]>();
  /** change statuses counted per job, by JSON [crawlId, teamId, tag] */
  private readonly counts = new Map<string, ChangeCounts>();
  private readonly logger: Logger | undefined;

  private constructor(dir: string, logger?: Logger) {
    this.log = new AppendLog(join(dir, "store", "snapshots.jsonl"));
    this.logger = logger;
  }

  static async open(dir: string, logger?: Logger): Promise<EmbeddedSnapshotStore> {
    const store = new EmbeddedSnapshotStore(dir, logger);
    let bad = 0;
    for await (const { line, pos, len } of readLines(store.log.path, () => bad++)) {
      let s: Snapshot;
      try {
        s = JSON.parse(line) as Snapshot;
      } catch {
        bad++;
        continue;
      }
      store.remember(s, pos, len);
    }
    if (bad > 0) logger?.warn({ file: store.log.path, dropped: bad }, "snapshots: unreadable entries skipped (those pages compare as new)");
    return store;
  }

  private remember(s: Snapshot, pos: number, len: number): void {
    const key = keyOf(s.teamId, s.tag, s.urlKey);
    const prev = this.index.get(key);
    // a job snapshots a URL once: a second snapshot of it by the same job (a replay) is not counted again
    if (prev?.crawlId !== s.crawlId) {
      const countKey = JSON.stringify([s.crawlId, s.teamId, s.tag]);
      const c = this.counts.get(countKey) ?? { new: 0, same: 0, changed: 0, removed: 0 };
      c[s.changeStatus]++;
      this.counts.set(countKey, c);
    }
    if (!prev || s.scrapedAt >= prev.scrapedAt) this.index.set(key, { pos, len, scrapedAt: s.scrapedAt, crawlId: s.crawlId, origin: s.origin, changeStatus: s.changeStatus });
    if (s.changeStatus === "removed" && s.statusCode === 0) {
      const list = this.removed.get(s.crawlId) ?? [];
      if (!list.some((r) => r.urlKey === s.urlKey && r.teamId === s.teamId && r.tag === s.tag)) list.push({ ...s, doc: "" });
      this.removed.set(s.crawlId, list);
    }
  }

  private async read(entry: Entry): Promise<Snapshot | null> {
    await this.log.flush();
    this.reader ??= new FileReader(this.log.path);
    try {
      return JSON.parse((await this.reader.read(entry.pos, entry.len)).toString("utf8")) as Snapshot;
    } catch (err) {
      this.logger?.warn({ file: this.log.path, pos: entry.pos, err: (err as Error).message }, "snapshots: unreadable entry ignored");
      return null;
    }
  }

  async latest(teamId: string, tag: string, urlKeys: string[]): Promise<Map<string, Snapshot>> {
    const out = new Map<string, Snapshot>();
    for (const urlKey of new Set(urlKeys)) {
      const entry = this.index.get(keyOf(teamId, tag, urlKey));
      const s = entry ? await this.read(entry) : null;
      if (s) out.set(urlKey, s);
    }
    return out;
  }

  async put(rows: Snapshot[]): Promise<void> {
    if (rows.length === 0) return;
    const lines = rows.map((r) => JSON.stringify(r));
    const { positions, written } = this.log.append(lines);
    await written;
    rows.forEach((r, i) => this.remember(r, positions[i] as number, Buffer.byteLength(lines[i] as string)));
  }

  async sweepRemoved(req: SweepRequest): Promise<Snapshot[]> {
    const prefix = JSON.stringify([req.teamId, req.tag]).slice(0, -1) + ",";
    const tombstones: Snapshot[] = [];
    for (const [key, entry] of this.index) {
      if (!key.startsWith(prefix) || entry.origin !== req.origin || entry.crawlId === req.crawlId || entry.changeStatus === "removed") continue;
      const s = await this.read(entry);
      if (!s || req.reached.has(s.urlKey)) continue;
      tombstones.push(tombstone(s, req));
    }
    await this.put(tombstones);
    return this.removedBy(req.teamId, req.tag, req.crawlId);
  }

  async removedBy(teamId: string, tag: string, crawlId: string): Promise<Snapshot[]> {
    return (this.removed.get(crawlId) ?? []).filter((s) => s.teamId === teamId && s.tag === tag);
  }

  async changeCounts(teamId: string, tag: string, crawlId: string): Promise<ChangeCounts> {
    return { ...(this.counts.get(JSON.stringify([crawlId, teamId, tag])) ?? { new: 0, same: 0, changed: 0, removed: 0 }) };
  }

  async close(): Promise<void> {
    await this.log.close();
    await this.reader?.reset();
  }
}

/** The tombstone of a page no longer reached: the previous snapshot's time in `tracking`, no document (statusCode 0). */
export function tombstone(previous: Snapshot, req: SweepRequest): Snapshot {
  return {
    ...previous, crawlId: req.crawlId, scrapedAt: req.now, statusCode: 0, changeStatus: "removed", contentHash: "", etag: "", lastModified: "",
    doc: "", links: [], tracking: JSON.stringify({ previousScrapeAt: new Date(previous.scrapedAt).toISOString(), changeStatus: "removed", visibility: "hidden" }),
  };
}
