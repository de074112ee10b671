// Checks a job's web archives as served by Trawl with an independent reader (Webrecorder's Python warcio, installed
// by scripts/warcio.sh): every file downloaded whole (size and SHA-256 as listed), `warcio check` finds every record
// valid and its digests matching, and the CDXJ index lists each URL once, sorted, at the offset and length of the
// URL's response or revisit record as `warcio index` reads the file, which a Range request reads by itself.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { expect } from "vitest";
import { getJson } from "./harness.ts";

const run = promisify(execFile);
let warcio = "";
let dir = "";

/** Installs warcio (a virtualenv, idempotent) and makes a directory for the downloads; call in beforeAll. */
export async function setUpWarcio(): Promise<void> {
  await run("bash", ["scripts/warcio.sh", "install"], { timeout: 180_000 });
  warcio = (await run("bash", ["scripts/warcio.sh", "bin"])).stdout.trim();
  dir = await mkdtemp(join(tmpdir(), "warc-check-"));
}

export async function tearDownWarcio(): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

export interface IndexEntry { url: string; mime: string; status: string; digest: string; length: string; offset: string; filename: string }
export interface WarcioEntry { "warc-type": string; "warc-target-uri"?: string; "warc-profile"?: string; offset: string; length: string; file: string }

type Listed = { name: string; bytes: number; sha256: string; url: string };

/**
 * The job's WARC files once the listing stays the same for a second. A crawl may archive after it completed: a fetch
 * task delivered again after a restart (kill -9) is fetched and archived (and listed once by the index) after the crawl
 * stored the page, so a file can grow between the listing and its download.
 */
async function settledListing(api: string, base: string, id: string): Promise<Listed[]> {
  let last = "";
  for (let i = 0; ; i++) {
    const list = await getJson(`${api}${base}/${id}/warc`);
    expect(list.status).toBe(200);
    expect(list.body.success).toBe(true);
    const now = JSON.stringify(list.body.files);
    if (now === last || i >= 30) return list.body.files as Listed[];
    last = now;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Downloads the job's WARC files, checks them with warcio, and checks its CDXJ against warcio's own index. */
export async function checkArchives(api: string, base: string, id: string): Promise<{ cdxj: { key: string; entry: IndexEntry }[]; records: WarcioEntry[] }> {
  const files = await settledListing(api, base, id);
  expect(files.length).toBeGreaterThan(0);
  const contents = new Map<string, Buffer>();
  const records: WarcioEntry[] = [];
  for (const f of files) {
    const res = await fetch(f.url);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBe(f.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(f.sha256);
    contents.set(f.name, bytes);
    const path = join(dir, `${id}-${f.name}`);
    await writeFile(path, bytes);
    const check = await run(warcio, ["check", "-v", path]);
    expect(check.stdout).not.toMatch(/fail/i);
    const index = await run(warcio, ["index", "-f", "warc-type,warc-target-uri,warc-profile,offset,length", path]);
    for (const line of index.stdout.trim().split("\n")) records.push({ ...(JSON.parse(line) as WarcioEntry), file: f.name });
  }
  expect(records[0]!["warc-type"]).toBe("warcinfo");
  const res = await fetch(`${api}${base}/${id}/cdxj`);
  expect(res.status).toBe(200);
  const lines = (await res.text()).trim().split("\n");
  const cdxj = lines.map((l) => ({ key: l.split(" ")[0]!, entry: JSON.parse(l.slice(l.indexOf("{"))) as IndexEntry }));
  // sorted by key, each URL once
  expect(cdxj.map((c) => c.key)).toEqual([...cdxj.map((c) => c.key)].sort());
  expect(new Set(cdxj.map((c) => c.entry.url)).size).toBe(cdxj.length);
  for (const { entry } of cdxj) {
    // the index points at a response or revisit record of the URL, as warcio reads the file
    const record = records.find((r) => r.file === entry.filename && r.offset === entry.offset);
    expect(record, entry.url).toMatchObject({ "warc-target-uri": entry.url, length: entry.length, "warc-type": expect.stringMatching(/^(response|revisit)$/) });
    // and a Range request reads that record by itself
    const start = Number(entry.offset);
    const end = start + Number(entry.length) - 1;
    const part = await fetch(`${api}${base}/${id}/warc/${entry.filename}`, { headers: { range: `bytes=${start}-${end}` } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes ${start}-${end}/${contents.get(entry.filename)!.length}`);
    const raw = gunzipSync(Buffer.from(await part.arrayBuffer())).toString("latin1");
    expect(raw.startsWith("WARC/1.1\r\n")).toBe(true);
    expect(raw).toContain(`WARC-Target-URI: ${entry.url}\r\n`);
  }
  return { cdxj, records };
}

