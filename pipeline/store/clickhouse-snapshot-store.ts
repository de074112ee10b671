// ClickHouse adapter of the SnapshotStore port. page_snapshots: the last snapshot per (team, tag, URL key)
// (ReplacingMergeTree by scraped_at; reads take argMax, so they are right before a merge too); page_history: one small
// row per job and URL (its change status), kept after the snapshot moved on — the pages a crawl reported removed
// are read from it, and it is the table a later "what changed this week" query reads.
import type { ClickHouseClient } from "./clickhouse.ts";
import type { ChangeCounts, ChangeStatus } from "./change-tracking.ts";
import { tombstone, type Snapshot, type SnapshotStore, type SweepRequest } from "./snapshot-store.ts";
import { list, raw, sql } from "./sql.ts";

const COLUMNS = [
  "team_id", "tag", "url_key", "url", "crawl_id", "origin", "scraped_at", "status_code", "change_status", "content_hash", "etag", "last_modified",
  "options_hash", "doc", "links", "tracking",
];
const HISTORY = ["team_id", "tag", "url_key", "crawl_id", "url", "origin", "change_status", "status_code", "content_hash", "at"];

/** Every column's latest value per URL key (argMax by scraped_at): valid before and after ReplacingMergeTree merges. */
const LATEST = COLUMNS.filter((c) => !["team_id", "tag", "url_key"].includes(c)).map((c) => `argMax(${c}, scraped_at) AS l_${c}`).join(", ");
/** Aliases unlike the column names (ClickHouse 18.16 substitutes an alias equal to a column into its own aggregate). */
const unalias = (r: Record<string, unknown>): Row => Object.fromEntries(Object.entries(r).map(([k, v]) => [k.startsWith("l_") ? k.slice(2) : k, v])) as unknown as Row;

interface Row {
  team_id: string; tag: string; url_key: string; url: string; crawl_id: string; origin: string; scraped_at: unknown; status_code: unknown;
  change_status: string; content_hash: string; etag: string; last_modified: string; options_hash: string; doc: string; links: string; tracking: string;
}

function toSnapshot(r: Row): Snapshot {
  return {
    teamId: r.team_id, tag: r.tag, urlKey: r.url_key, url: r.url, crawlId: r.crawl_id, origin: r.origin, scrapedAt: Number(r.scraped_at),
    statusCode: Number(r.status_code), changeStatus: r.change_status as ChangeStatus, contentHash: r.content_hash, etag: r.etag,
    lastModified: r.last_modified, optionsHash: r.options_hash, doc: r.doc, links: r.links ? (JSON.parse(r.links) as string[]) : [], tracking: r.tracking,
  };
}

export class ClickHouseSnapshotStore implements SnapshotStore {
  private readonly ch: ClickHouseClient;

  constructor(ch: ClickHouseClient) {
    this.ch = ch;
  }

  async latest(teamId: string, tag: string, urlKeys: string[]): Promise<Map<string, Snapshot>> {
    const out = new Map<string, Snapshot>();
    const keys = [...new Set(urlKeys)];
    for (let i = 0; i < keys.length; i += 500) {
      const some = keys.slice(i, i + 500);
      const rows = await this.ch.query<Record<string, unknown>>(sql`SELECT team_id, tag, url_key, ${raw(LATEST)} FROM ${raw(this.ch.table("page_snapshots"))}
        WHERE team_id = ${teamId} AND tag = ${tag} AND url_key IN (${list(some)}) GROUP BY team_id, tag, url_key`);
      for (const r of rows.map(unalias)) out.set(r.url_key, toSnapshot(r));
    }
    return out;
  }

  async put(rows: Snapshot[]): Promise<void> {
    if (rows.length === 0) return;
    await this.ch.insert("page_snapshots", COLUMNS, rows.map((s) => [
      s.teamId, s.tag, s.urlKey, s.url, s.crawlId, s.origin, s.scrapedAt, s.statusCode, s.changeStatus, s.contentHash, s.etag, s.lastModified,
      s.optionsHash, s.doc, JSON.stringify(s.links), s.tracking,
    ]));
    await this.ch.insert("page_history", HISTORY, rows.map((s) => [s.teamId, s.tag, s.urlKey, s.crawlId, s.url, s.origin, s.changeStatus, s.statusCode, s.contentHash, s.scrapedAt]));
  }

  async sweepRemoved(req: SweepRequest): Promise<Snapshot[]> {
    // the lineage's pages whose latest snapshot is from another job and not a tombstone (without their documents)
    const rows = await this.ch.query<Record<string, unknown>>(sql`SELECT team_id, tag, url_key, ${raw(LATEST.replace("argMax(doc, scraped_at) AS l_doc", "'' AS l_doc"))}
      FROM ${raw(this.ch.table("page_snapshots"))} WHERE team_id = ${req.teamId} AND tag = ${req.tag}
      GROUP BY team_id, tag, url_key HAVING l_origin = ${req.origin} AND l_crawl_id != ${req.crawlId} AND l_change_status != 'removed'`);
    await this.put(rows.map(unalias).map(toSnapshot).filter((s) => !req.reached.has(s.urlKey)).map((s) => tombstone(s, req)));
    return this.removedBy(req.teamId, req.tag, req.crawlId);
  }

  async removedBy(teamId: string, tag: string, crawlId: string): Promise<Snapshot[]> {
    const rows = await this.ch.query<{ url_key: string; url: string; origin: string; at: unknown }>(sql`SELECT url_key, any(url) AS url, any(origin) AS origin, max(at) AS at
      FROM ${raw(this.ch.table("page_history"))} WHERE team_id = ${teamId} AND tag = ${tag} AND crawl_id = ${crawlId} AND change_status = 'removed' AND status_code = 0
      GROUP BY url_key ORDER BY url_key`);
    if (rows.length === 0) return [];
    // the tombstone's tracking (the previous scrape's time) is on its snapshot row, unless a later job replaced it
    const tracking = new Map<string, string>();
    const snaps = await this.ch.query<{ url_key: string; tracking: string }>(sql`SELECT url_key, tracking FROM ${raw(this.ch.table("page_snapshots"))}
      WHERE team_id = ${teamId} AND tag = ${tag} AND crawl_id = ${crawlId} AND change_status = 'removed' AND url_key IN (${list(rows.map((r) => r.url_key))})`);
    for (const s of snaps) tracking.set(s.url_key, s.tracking);
    return rows.map((r) => ({
      teamId, tag, urlKey: r.url_key, url: r.url, crawlId, origin: r.origin, scrapedAt: Number(r.at), statusCode: 0, changeStatus: "removed",
      contentHash: "", etag: "", lastModified: "", optionsHash: "", doc: "", links: [],
      tracking: tracking.get(r.url_key) ?? JSON.stringify({ previousScrapeAt: null, changeStatus: "removed", visibility: "hidden" }),
    }));
  }

  async changeCounts(teamId: string, tag: string, crawlId: string): Promise<ChangeCounts> {
    const rows = await this.ch.query<{ change_status: string; n: unknown }>(sql`SELECT change_status, uniqExact(url_key) AS n FROM ${raw(this.ch.table("page_history"))}
      WHERE team_id = ${teamId} AND tag = ${tag} AND crawl_id = ${crawlId} GROUP BY change_status`);
    const out: ChangeCounts = { new: 0, same: 0, changed: 0, removed: 0 };
    for (const r of rows) if (r.change_status in out) out[r.change_status as ChangeStatus] = Number(r.n);
    return out;
  }

  async close(): Promise<void> {}
}
