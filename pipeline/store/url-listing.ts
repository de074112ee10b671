// A finished crawl's URL listing (GET /v2/crawl/:id/urls), kept on disk once built so that a page of it is read by
// position instead of every URL row being read, merged and sorted again for each page (seconds for a million URLs).
// Files beside the crawl's URL log (url-logs.ts): <id>.list (one item's JSON a line, in listing order), <id>.list.idx
// (each line's start, 8 bytes an item, and the end), <id>.list.codes (one byte an item, to filter on: see
// crawl-urls.ts) and <id>.list.json (the stamp it was built for, written last: no listing without it). The stamp
// changes when the crawl's record or URL rows do, so a stale listing is never served.
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
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
  /** The listing built for `stamp` (the crawl's state), or null. */
  open(crawlId: string, stamp: string): UrlListing | null;
  save(crawlId: string, stamp: string, items: ListingItem[], unlisted: number): UrlListing;
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

  open(crawlId: string, stamp: string): UrlListing | null {
    const base = this.base(crawlId);
    if (!existsSync(`${base}.list.json`)) return null;
    try {
      const meta = JSON.parse(readFileSync(`${base}.list.json`, "utf8")) as { stamp: string; size: number; unlisted: number };
      return meta.stamp === stamp ? new DiskListing(base, meta.size, meta.unlisted) : null;
    } catch {
      return null; // a listing being replaced: built again
    }
  }

  save(crawlId: string, stamp: string, items: ListingItem[], unlisted: number): UrlListing {
    const base = this.base(crawlId);
    if (existsSync(`${base}.list.json`)) unlinkSync(`${base}.list.json`); // the old files are no listing from here on
    const list = openSync(`${base}.list`, "w");
    const idx = Buffer.allocUnsafe((items.length + 1) * 8);
    const codes = Buffer.allocUnsafe(items.length);
    let pos = 0;
    try {
      let chunk: string[] = [];
      const flush = () => {
        const b = Buffer.from(chunk.join(""), "utf8");
        for (let done = 0; done < b.length; ) done += writeSync(list, b, done, b.length - done);
        chunk = [];
      };
      items.forEach((item, i) => {
        idx.writeDoubleLE(pos, i * 8);
        codes[i] = item.code;
        const text = `${item.json}\n`;
        pos += Buffer.byteLength(text);
        chunk.push(text);
        if (chunk.length >= 4096) flush();
      });
      flush();
      idx.writeDoubleLE(pos, items.length * 8);
      if (fstatSync(list).size !== pos) throw new Error(`url listing: ${base}.list was not written whole`);
    } finally {
      closeSync(list);
    }
    writeWhole(`${base}.list.idx`, idx);
    writeWhole(`${base}.list.codes`, codes);
    writeWhole(`${base}.list.json`, Buffer.from(JSON.stringify({ stamp, size: items.length, unlisted })));
    return new DiskListing(base, items.length, unlisted);
  }

  /** Deletes a crawl's listing (it expired). */
  remove(crawlId: string): void {
    const base = this.base(crawlId);
    for (const suffix of SUFFIXES) {
      try {
        unlinkSync(base + suffix);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  }
}

function writeWhole(path: string, data: Buffer): void {
  const fd = openSync(`${path}.tmp`, "w");
  try {
    for (let done = 0; done < data.length; ) done += writeSync(fd, data, done, data.length - done);
  } finally {
    closeSync(fd);
  }
  renameSync(`${path}.tmp`, path);
}
