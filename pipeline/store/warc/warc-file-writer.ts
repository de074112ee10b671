// The WARC files of one crawl written by one process: gzip per record (each record its own gzip member, so any
// record can be read by offset), a warcinfo record opening every file, a new file past WARC_MAX_FILE_BYTES, and
// beside each file its CDXJ lines (`<file>.cdxj`, unsorted; merged, sorted and deduplicated on read: cdxj-index.ts).
// Names are Common Crawl's shape: <prefix>-<yyyyMMddHHmmssSSS>-<serial>-<host>.warc.gz. A new process never
// appends to an older process's file: it opens its own, so a torn tail left by a kill is in a file nobody extends,
// and an index line is written only after its record's bytes were, so the index points at whole records only. After
// each append the sidecar also gets `#end <bytes>`: the file's length up to its last whole append, to which a torn
// tail is cut (warc-repair.ts). A file the writer closed (rolled, idle, or at stop) gets `<name>.closed`
// (warc-markers.ts): it is complete, and is what the S3 upload copies.
import { writeSync } from "node:fs";
import { open, mkdir, type FileHandle } from "node:fs/promises";
import { markClosed } from "./warc-markers.ts";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzip as gzipCallback, gzipSync } from "node:zlib";
import { surt, cdxTimestamp } from "./surt.ts";
import { newRecordId, warcRecord } from "./warc-record.ts";
import type { CdxFields, EarlierCapture, PlannedRecord } from "./exchange-records.ts";

const gzip = promisify(gzipCallback);
/** Records smaller than this are gzipped on the calling thread (~1 ms of it at 256 KB), larger ones on the thread pool. */
const SYNC_GZIP_BYTES = 256 * 1024;
/**
 * Compression level 3: on the PostgreSQL manual's pages 135-165 µs of CPU per page and 3,979 bytes, against 245-272 µs
 * and 3,694 bytes at zlib's default 6 (level 1: 112-147 µs, 4,157 bytes). Gzip's level changes nothing for readers.
 */
const GZIP = { level: 3 };

export interface WarcFileWriterOptions {
  dir: string;
  crawlId: string;
  maxFileBytes: number;
  prefix: string;
  /** host part of file names: the machine and process */
  host: string;
  software: string;
  now: () => number;
  /** payload digests remembered for identical-payload revisits */
  maxDigests?: number;
}

interface OpenFile {
  name: string;
  handle: FileHandle;
  index: FileHandle;
  bytes: number;
}

const fileStamp = (ms: number): string => new Date(ms).toISOString().replace(/[-:T.Z]/g, "");

export class WarcFileWriter {
  private readonly opts: WarcFileWriterOptions;
  private file: OpenFile | null = null;
  private serial = 0;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly digests = new Map<string, EarlierCapture>();
  /** origins whose robots.txt this writer archived */
  readonly robotsWritten = new Set<string>();
  lastUsed = 0;

  constructor(opts: WarcFileWriterOptions) {
    this.opts = opts;
  }

  /** An earlier capture of this payload in this writer's files (identical-payload-digest). */
  readonly earlier = (digest: string): EarlierCapture | undefined => this.digests.get(digest);

  /** Appends the records (compressed in parallel, written in order, together) and their index lines. */
  async append(records: PlannedRecord[]): Promise<void> {
    this.lastUsed = this.opts.now();
    for (const r of records) {
      if (r.cdx && r.cdx.mime !== "warc/revisit" && r.record.payloadDigest && !this.digests.has(r.record.payloadDigest)) {
        if (this.digests.size >= (this.opts.maxDigests ?? 100_000)) this.digests.delete(this.digests.keys().next().value as string);
        this.digests.set(r.record.payloadDigest, { uri: r.cdx.url, date: new Date(r.cdx.timestamp).toISOString() });
      }
    }
    // compressed on this thread unless large: an async gzip of a 14 KB page cost ~180 µs of CPU against ~95 µs
    // synchronously (the thread pool's round trip and the stream around it cost more than the compression); a record
    // of SYNC_GZIP_BYTES or more (a PDF) goes to the thread pool so that it does not hold the event loop
    const members = await Promise.all(records.map((r) => (r.record.bytes.length < SYNC_GZIP_BYTES ? gzipSync(r.record.bytes, GZIP) : gzip(r.record.bytes, GZIP))));
    const run = this.chain.then(() => this.write(records, members));
    this.chain = run.catch(() => undefined);
    await run;
  }

  private async write(records: PlannedRecord[], members: Buffer[]): Promise<void> {
    const size = members.reduce((n, m) => n + m.length, 0);
    if (this.file && this.file.bytes > 0 && this.file.bytes + size > this.opts.maxFileBytes && this.file.bytes > this.warcinfoBytes) await this.roll();
    const file = this.file ?? (await this.openFile());
    const lines: string[] = [];
    let offset = file.bytes;
    for (const [i, member] of members.entries()) {
      const cdx = records[i]!.cdx;
      if (cdx) lines.push(cdxjLine(cdx, offset, member.length, file.name));
      offset += member.length;
    }
    const bytes = Buffer.concat(members);
    const index = `${lines.join("")}#end ${offset}\n`;
    // a page's records (a few KB) go to the page cache at once: a write through the thread pool cost more CPU than
    // the write itself; a large append (a PDF) is written asynchronously so that it does not hold the event loop
    if (bytes.length < SYNC_GZIP_BYTES) writeSync(file.handle.fd, bytes, 0, bytes.length, file.bytes);
    else await file.handle.write(bytes, 0, bytes.length, file.bytes);
    file.bytes = offset;
    writeSync(file.index.fd, index);
  }

  private warcinfoBytes = 0;

  private async openFile(): Promise<OpenFile> {
    await mkdir(this.opts.dir, { recursive: true });
    const now = this.opts.now();
    const name = `${this.opts.prefix}-${fileStamp(now)}-${String(this.serial++).padStart(5, "0")}-${this.opts.host}.warc.gz`;
    const handle = await open(join(this.opts.dir, name), "wx");
    const index = await open(join(this.opts.dir, `${name}.cdxj`), "a");
    const info = [
      `software: ${this.opts.software}`,
      "format: WARC File Format 1.1",
      "conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
      `isPartOf: ${this.opts.crawlId}`,
      `hostname: ${this.opts.host}`,
    ].join("\r\n") + "\r\n";
    const record = warcRecord({ type: "warcinfo", id: newRecordId(), date: now, fields: [["WARC-Filename", name]], contentType: "application/warc-fields", payload: Buffer.from(info) });
    const member = await gzip(record.bytes);
    await handle.write(member, 0, member.length, 0);
    await index.write(`#end ${member.length}\n`);
    this.warcinfoBytes = member.length;
    this.file = { name, handle, index, bytes: member.length };
    return this.file;
  }

  /** Closes the current file and marks it closed (`<name>.closed`: complete, never extended again; uploaded to S3 when set). */
  private async roll(): Promise<void> {
    const file = this.file;
    this.file = null;
    if (!file) return;
    await Promise.all([file.handle.close(), file.index.close()]);
    await markClosed(join(this.opts.dir, file.name));
  }

  /** Waits for the writes under way and closes the current file. */
  async close(): Promise<void> {
    await this.chain;
    const run = this.chain.then(() => this.roll());
    this.chain = run.catch(() => undefined);
    await run;
  }
}

/** `<surt> <timestamp> <json>`: one CDXJ line, as pywb and Common Crawl write them. */
export function cdxjLine(cdx: CdxFields, offset: number, length: number, filename: string): string {
  const json = { url: cdx.url, mime: cdx.mime, status: String(cdx.status), digest: cdx.digest, length: String(length), offset: String(offset), filename };
  return `${surt(cdx.url)} ${cdxTimestamp(cdx.timestamp)} ${JSON.stringify(json)}\n`;
}
