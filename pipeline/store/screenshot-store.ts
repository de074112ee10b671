// Screenshots served by Trawl (GET /v2/screenshots/<job>/<id>.png|jpeg) instead of data URLs inside documents.
// One port, two adapters: ClickHouse (cluster; the image base64 in a String column) and files under
// DATA_DIR/store/screenshots/ (embedded). A screenshot belongs to a job (a crawl, a batch, or a scrape's pseudo crawl
// id): it is served while its job is (exactly: GET reads check the job's expiry) and deleted with it by the retention
// sweep, later.
import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isStandaloneJob } from "../runtime/constants.ts";
import type { ClickHouseClient } from "./clickhouse.ts";
import { readTable } from "./clickhouse-retention.ts";
import { sql } from "./sql.ts";

export type ImageType = "png" | "jpeg";

export interface Screenshot {
  type: ImageType;
  bytes: Buffer;
}

export interface ScreenshotStore {
  put(jobId: string, id: string, shot: Screenshot, at: number): Promise<void>;
  get(jobId: string, id: string): Promise<Screenshot | null>;
  /** Deletes the screenshots of these jobs, and those of scrapes stored before `scrapeCutoff` (ClickHouse: with their days). */
  deleteExpired(jobIds: string[], scrapeCutoff: number): Promise<void>;
}

const DATA_URL = /^data:image\/(png|jpeg);base64,/;
export const SCREENSHOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface Publish {
  store: ScreenshotStore;
  /** the stored job id (crawl id, or scrapeJobId(team, scrapeId)) */
  jobId: string;
  /** the id in the public URL: the crawl id, or the scrape id */
  publicJobId: string;
  /** `<scheme>://<host>` of the API */
  base: string;
  now: number;
}

/**
 * Replaces the data URLs of a rendered page (the screenshot format, the screenshot actions) by URLs of stored images.
 * Anything that is not an image data URL is left as it is.
 */
export async function publishScreenshots<T extends { screenshot?: string; actions?: { screenshots: string[] } }>(page: T, p: Publish): Promise<T> {
  const one = async (dataUrl: string): Promise<string> => {
    const type = DATA_URL.exec(dataUrl)?.[1] as ImageType | undefined;
    if (!type) return dataUrl;
    const id = randomUUID();
    await p.store.put(p.jobId, id, { type, bytes: Buffer.from(dataUrl.slice(dataUrl.indexOf(",") + 1), "base64") }, p.now);
    return `${p.base}/v2/screenshots/${p.publicJobId}/${id}.${type === "jpeg" ? "jpeg" : "png"}`;
  };
  const out = { ...page };
  if (page.screenshot) out.screenshot = await one(page.screenshot);
  if (page.actions) out.actions = { ...page.actions, screenshots: await Promise.all(page.actions.screenshots.map(one)) };
  return out;
}


/**
 * Screenshots in ClickHouse, in a table partitioned by the day they were stored: their days are dropped whole by the
 * crawl store's retention sweep (`RETAINED` in clickhouse-retention.ts: a crawl's while it is live, a scrape's once the
 * day is past retention), never deleted row by row. Whether one is still served is decided by its job's expiry
 * (`readScreenshot`), not by whether its row is still there.
 */
export class ClickHouseScreenshotStore implements ScreenshotStore {
  private readonly ch: ClickHouseClient;
  /** retained tables whose unpartitioned predecessor was there at start (what `migrate` returned): read with it */
  private readonly legacy: ReadonlySet<string>;

  constructor(ch: ClickHouseClient, legacy: ReadonlySet<string> = new Set()) {
    this.ch = ch;
    this.legacy = legacy;
  }

  async put(jobId: string, id: string, shot: Screenshot, at: number): Promise<void> {
    await this.ch.insert("screenshots", ["job_id", "id", "type", "data_base64", "stored_at"], [[jobId, id, shot.type, shot.bytes.toString("base64"), at]]);
  }

  async get(jobId: string, id: string): Promise<Screenshot | null> {
    // merge() over a predecessor the sweep has dropped since reads the one table left
    const rows = await this.ch.query<{ type: string; data_base64: string }>(
      sql`SELECT type, data_base64 FROM ${readTable(this.ch, "screenshots", this.legacy)} WHERE job_id = ${jobId} AND id = ${id} LIMIT 1`,
    );
    const row = rows[0];
    return row ? { type: row.type === "jpeg" ? "jpeg" : "png", bytes: Buffer.from(row.data_base64, "base64") } : null;
  }

  /** Nothing to do here: the crawl store's sweep drops the screenshots' days with the other tables' (no mutation). */
  async deleteExpired(_jobIds: string[], _scrapeCutoff: number): Promise<void> {}
}

/**
 * One file per image: `<dir>/<job>/<id>.<type>`, the job id hex-encoded (scrape job ids hold a team id and colons).
 * A job whose crawl is no longer known (it expired while the process was down) is deleted too.
 */
export class EmbeddedScreenshotStore implements ScreenshotStore {
  private readonly dir: string;
  private readonly known: (jobId: string) => Promise<boolean>;

  constructor(dir: string, known: (jobId: string) => Promise<boolean>) {
    this.dir = join(dir, "store", "screenshots");
    this.known = known;
  }

  private jobDir(jobId: string): string {
    return join(this.dir, Buffer.from(jobId).toString("hex"));
  }

  async put(jobId: string, id: string, shot: Screenshot, _at: number): Promise<void> {
    if (!SCREENSHOT_ID.test(id)) throw new Error(`bad screenshot id ${id}`);
    await mkdir(this.jobDir(jobId), { recursive: true });
    await writeFile(join(this.jobDir(jobId), `${id}.${shot.type}`), shot.bytes);
  }

  async get(jobId: string, id: string): Promise<Screenshot | null> {
    if (!SCREENSHOT_ID.test(id)) return null;
    for (const type of ["png", "jpeg"] as const) {
      const bytes = await readFile(join(this.jobDir(jobId), `${id}.${type}`)).catch(() => null);
      if (bytes) return { type, bytes };
    }
    return null;
  }

  async deleteExpired(jobIds: string[], scrapeCutoff: number): Promise<void> {
    const expired = new Set(jobIds);
    const dirs = await readdir(this.dir).catch(() => [] as string[]);
    for (const hex of dirs) {
      const jobId = Buffer.from(hex, "hex").toString();
      const path = join(this.dir, hex);
      const gone = isStandaloneJob(jobId)
        ? ((await stat(path).catch(() => null))?.mtimeMs ?? 0) < scrapeCutoff
        : expired.has(jobId) || !(await this.known(jobId));
      if (gone) await rm(path, { recursive: true, force: true });
    }
  }
}
