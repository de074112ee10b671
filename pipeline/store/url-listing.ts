// A finished crawl's URL listing (GET /v2/crawl/:id/urls), kept on disk once built so that a page of it is read by
// position instead of every URL row being read, merged and sorted again for each page (seconds for a million URLs).
// Files beside the crawl's URL log (url-logs.ts): <id>.list (one item's JSON a line, in listing order), <id>.list.idx
// (each line's start, 8 bytes an item, and the end), <id>.list.codes (one byte an item, to filter on: see
// url-entry.ts) and <id>.list.json (the stamp it was built for and which generation of files holds it, written last:
// no listing without it). A new listing is written to the other generation (<id>.1.list...), so the one named stays
// whole while the next is written. The stamp changes when the crawl's status, reason counts or URL rows do.
import { closeSync, existsSync, openSync, readFileSync, readSync, unlinkSync } from "node:fs";
import { open, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

export interface ListingItem {
  json: string;
  /** a byte the reader filters on */
  code: number;
}

export interface ListingPage {
  items: string[];
  /** items matching the filter */
  total: number;
}

export interface UrlListing {
  readonly size: number;
  readonly unlisted: number;
  /** Items [skip, skip + limit) of those whose code `match` accepts (all without). */
  page(skip: number, limit: number, match?: (code: number) => boolean): ListingPage;
}

/** Where a store keeps listings (the embedded one: on disk). */
export interface UrlListings {
  /** The listing built for `stamp` (the crawl's state; null: whichever was built last), or null. */
  open(crawlId: string, stamp: string | null): UrlListing | null;
  /** Writes a listing (asynchronously, a slice at a time); one save of a crawl at a time. */
  save(crawlId: string, stamp: string, items: ListingItem[], unlisted: number): Promise<UrlListing>;
}

const SUFFIXES = [".list", ".list.idx", ".list.codes", ".list.json"];

function readAt(fd: number, pos: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  for (let done = 0; done < len; ) {
    const got = readSync(fd, buf, done, len - done, pos + done);
    if (got === 0) throw new Error("url listing: file shorter than its index");
    done += got;
  }
  return buf;
}

class DiskListing implements UrlListing {
  readonly size: number;
  readonly unlisted: number;
  private readonly base: string;

  constructor(base: string, size: number, unlisted: number) {
    this.base = base;
    this.size = size;
    this.unlisted = unlisted;
  }

  page(skip: number, limit: number, match?: (code: number) => boolean): ListingPage {
    const list = openSync(`${this.base}.list`, "r");
    const idx = openSync(`${this.base}.list.idx`, "r");
    try {
      const line = (i: number, n = 1): string[] => {
        const offs = readAt(idx, i * 8, (n + 1) * 8);
        const start = offs.readDoubleLE(0);
        const text = readAt(list, start, offs.readDoubleLE(n * 8) - start).toString("utf8");
        return text.split("\n").slice(0, n);
      };
      if (!match) {
        const from = Math.min(skip, this.size);
        const n = Math.min(limit, this.size - from);
        return { items: n > 0 ? line(from, n) : [], total: this.size };
      }
      const codes = readFileSync(`${this.base}.list.codes`);
      const items: string[] = [];
      let total = 0;
      for (let i = 0; i < codes.length; i++) {
        if (!match(codes[i] as number)) continue;
        if (total >= skip && items.length < limit) items.push(line(i)[0] as string);
        total++;
      }
      return { items, total };
    } finally {
      closeSync(list);
      closeSync(idx);
    }
  }
}

export class DiskUrlListings implements UrlListings {
  private readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  private base(crawlId: string): string {
    return join(this.dir, Buffer.from(crawlId, "utf8").toString("base64url"));
  }

  open(crawlId: string, stamp: string | null): UrlListing | null {
    const base = this.base(crawlId);
    if (!existsSync(`${base}.list.json`)) return null;
    try {
      const meta = JSON.parse(readFileSync(`${base}.list.json`, "utf8")) as { stamp: string; size: number; unlisted: number; gen?: number };
      return stamp === null || meta.stamp === stamp ? new DiskListing(meta.gen ? `${base}.${meta.gen}` : base, meta.size, meta.unlisted) : null;
    } catch {
      return null; // a listing being replaced: built again
    }
  }

  async save(crawlId: string, stamp: string, items: ListingItem[], unlisted: number): Promise<UrlListing> {
    // two generations of files: the one the stamp file names stays whole (and is read) while the other is written
    const meta = `${this.base(crawlId)}.list.json`;
    const gen = this.genOf(meta) === 1 ? 0 : 1;
    const base = gen ? `${this.base(crawlId)}.${gen}` : this.base(crawlId);
    const list = await open(`${base}.list`, "w");
    const idx = Buffer.allocUnsafe((items.length + 1) * 8);
    const codes = Buffer.allocUnsafe(items.length);
    let pos = 0;
    try {
      // a slice of lines at a time, each written before the next is made (the event loop is free meanwhile)
      for (let from = 0; from < items.length; from += 4096) {
        const chunk: string[] = [];
        for (let i = from; i < Math.min(from + 4096, items.length); i++) {
          const item = items[i] as ListingItem;
          idx.writeDoubleLE(pos, i * 8);
          codes[i] = item.code;
          const text = `${item.json}\n`;
          pos += Buffer.byteLength(text);
          chunk.push(text);
        }
        const b = Buffer.from(chunk.join(""), "utf8");
        for (let done = 0; done < b.length; ) done += (await list.write(b, done, b.length - done)).bytesWritten;
      }
      idx.writeDoubleLE(pos, items.length * 8);
      if ((await list.stat()).size !== pos) throw new Error(`url listing: ${base}.list was not written whole`);
    } finally {
      await list.close();
    }
    await writeWhole(`${base}.list.idx`, idx);
    await writeWhole(`${base}.list.codes`, codes);
    await writeWhole(meta, Buffer.from(JSON.stringify({ stamp, size: items.length, unlisted, gen })));
    return new DiskListing(base, items.length, unlisted);
  }

  /** The generation a stamp file names (0 when none or unreadable). */
  private genOf(meta: string): number {
    try {
      return (JSON.parse(readFileSync(meta, "utf8")) as { gen?: number }).gen ?? 0;
    } catch {
      return 0;
    }
  }

  /** Deletes a crawl's listing (it expired). */
  remove(crawlId: string): void {
    const base = this.base(crawlId);
    for (const path of [...SUFFIXES.map((x) => base + x), ...SUFFIXES.map((x) => `${base}.1${x}`)]) {
      try {
        unlinkSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  }
}

async function writeWhole(path: string, data: Buffer): Promise<void> {
  await writeFile(`${path}.tmp`, data);
  await rename(`${path}.tmp`, path);
}
