// The uploader's core over a real WarcArchive in a temporary directory and an in-memory bucket (the ObjectStore port;
// the S3 adapter itself is tested against SeaweedFS in test/integration/warc-s3.test.ts): only closed files are
// copied, the index once the job ended and every file is copied, failures back off and give up with a stable log
// code, the state survives a new uploader (a restart), and a file written after the index was copied is copied with
// the index again.
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HttpExchange } from "./http-exchange.ts";
import type { ObjectStore } from "./s3-object-store.ts";
import { WarcArchive } from "./warc-archive.ts";
import { takeLease } from "./warc-markers.ts";
import { copyPending, WarcUploader } from "./warc-uploader.ts";

const JOB = "0b6f7a4c-1f2e-4c1a-9d7e-2a3b4c5d6e7f";

function exchange(url: string, body: string): HttpExchange {
  return {
    url,
    requestHead: `GET ${new URL(url).pathname} HTTP/1.1\r\nhost: ${new URL(url).host}\r\n\r\n`,
    statusLine: "HTTP/1.1 200 OK",
    statusCode: 200,
    headers: [["Content-Type", "text/html"]],
    payload: Buffer.from(body),
    peerIp: "127.0.0.1",
    at: Date.UTC(2026, 10, 28, 12, 0, 0),
  };
}

class MemoryBucket implements ObjectStore {
  readonly objects = new Map<string, Buffer>();
  puts = 0;
  down = false;
  async putFile(key: string, path: string, meta: { bytes: number; sha256: string }): Promise<void> {
    if (this.down) throw new Error("connect ECONNREFUSED 127.0.0.1:1");
    const bytes = await readFile(path);
    expect(bytes.length).toBe(meta.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(meta.sha256);
    this.puts++;
    this.objects.set(key, bytes);
  }
  async putBytes(key: string, body: Buffer): Promise<void> {
    if (this.down) throw new Error("connect ECONNREFUSED 127.0.0.1:1");
    this.puts++;
    this.objects.set(key, body);
  }
  url(key: string): string {
    return `s3://bucket/${key}`;
  }
  close(): void {}
}

describe("WarcUploader", () => {
  let root: string;
  let archive: WarcArchive;
  let bucket: MemoryBucket;
  let lines: Record<string, unknown>[];
  let ended: boolean;
  const uploader = (extra: Partial<ConstructorParameters<typeof WarcUploader>[0]> = {}) =>
    new WarcUploader({ archive, objects: bucket, prefix: "p", ended: async () => ended, log, initialDelayMs: 1, maxDelayMs: 2, maxAttempts: 3, parkMs: 60_000, ...extra });
  const log = pino({ level: "info" }, new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c))), cb()) }));

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "warc-upload-"));
    archive = new WarcArchive({ root, maxFileBytes: 4096 });
    bucket = new MemoryBucket();
    lines = [];
    ended = false;
  });
  afterEach(async () => {
    await archive.close();
    await rm(root, { recursive: true, force: true });
  });

  const pages = async (n: number, from = 0) => {
    for (let i = from; i < from + n; i++) await archive.archive([{ exchange: exchange(`https://a.test/p${i}`, randomBytes(1200).toString("hex")), context: { crawlId: JOB, role: "page", depth: 1 } }], JOB);
  };
  const local = async () => (await readdir(join(root, JOB))).filter((n) => n.endsWith(".warc.gz")).sort();

  it("copies closed files only, the index once the job ended and every file is copied; nothing twice", async () => {
    await pages(6); // rolled at 4 KB: all files but the last are closed
    const files = await local();
    expect(files.length).toBeGreaterThan(2);
    const u = uploader();
    expect((await u.pass()).uploaded).toEqual(files.slice(0, -1).map((n) => `p/${JOB}/${n}`));
    ended = true;
    expect((await u.pass()).uploaded).toEqual([]); // the last file is still open: no index yet
    expect(await copyPending(archive, JOB)).toBe(true);
    await archive.close(); // the writer closes its file (idle, or the process stops)
    expect((await u.pass()).uploaded).toEqual([`p/${JOB}/${files.at(-1)}`, `p/${JOB}/index.cdxj`]);
    for (const n of files) expect(bucket.objects.get(`p/${JOB}/${n}`)).toEqual(await readFile(join(root, JOB, n)));
    expect(bucket.objects.get(`p/${JOB}/index.cdxj`)?.toString()).toBe((await archive.cdxj(JOB)).join(""));
    expect((await archive.files(JOB)).map((f) => f.s3)).toEqual(files.map((n) => `s3://bucket/p/${JOB}/${n}`));
    expect(await copyPending(archive, JOB)).toBe(false);
    const puts = bucket.puts;
    expect((await u.pass()).uploaded).toEqual([]);
    expect((await uploader().pass()).uploaded).toEqual([]); // a restart finds it all done
    expect(bucket.puts).toBe(puts);

    // a file written after the index was copied (a task delivered again after a kill): it and the index again
    await pages(1, 10);
    await archive.close();
    const more = (await local()).filter((n) => !files.includes(n));
    expect((await u.pass()).uploaded).toEqual([...more.map((n) => `p/${JOB}/${n}`), `p/${JOB}/index.cdxj`]);
    expect(bucket.objects.get(`p/${JOB}/index.cdxj`)?.toString()).toContain("a.test/p10");
  });

  it("backs off while the bucket fails, gives up with WARC_S3_UPLOAD_GAVE_UP, and a restart copies what is left", async () => {
    await pages(3);
    await archive.close();
    ended = true;
    bucket.down = true;
    let now = 1_000_000;
    const u = uploader({ now: () => now });
    expect((await u.pass()).failed).toHaveLength(1); // the first file fails; the others wait for the next pass
    expect((await u.pass()).failed).toHaveLength(1); // another file's first attempt; the first waits for its delay
    now += 10;
    await u.pass();
    now += 10;
    await u.pass();
    const codes = lines.map((l) => l.code).filter(Boolean);
    expect(codes).toContain("WARC_S3_UPLOAD_FAILED");
    expect(codes).toContain("WARC_S3_UPLOAD_GAVE_UP");
    expect(lines.find((l) => l.code === "WARC_S3_UPLOAD_GAVE_UP")).toMatchObject({ level: 50, attempts: 3 });
    bucket.down = false;
    now += 10;
    const parked = await u.pass(); // the given-up file waits PARK_MS; the others go
    expect(parked.uploaded.length).toBeLessThan((await local()).length);
    const again = await uploader().pass(); // a new process: the parked file too, then the index
    expect(again.uploaded.at(-1)).toBe(`p/${JOB}/index.cdxj`);
    expect(await copyPending(archive, JOB)).toBe(false);
    expect([...bucket.objects.keys()].sort()).toEqual([...(await local()).map((n) => `p/${JOB}/${n}`), `p/${JOB}/index.cdxj`].sort());
  });

  it("a lease is one uploader's: another live one's is respected, a killed process's or a stale one is taken over", async () => {
    const path = join(root, "x.warc.gz");
    const mine = await takeLease(path);
    expect(mine).not.toBeNull();
    expect(await takeLease(path)).toBeNull();
    await mine!.release();
    await writeFile(`${path}.lease`, "other-host 1");
    expect(await takeLease(path)).toBeNull(); // another machine's replica, renewed lately
    expect(await takeLease(path, Date.now() + 11 * 60_000)).not.toBeNull(); // not renewed for 10 minutes
    await writeFile(`${path}.lease`, `${hostname()} 2147483646`);
    expect(await takeLease(path)).not.toBeNull(); // a process of this machine that is gone
  });

  it("a file a killed writer left is copied once the repair has cut it and marked it closed", async () => {
    await pages(1);
    const [name] = await local();
    ended = true;
    expect((await uploader().pass()).uploaded).toEqual([]); // open: not closed by its writer
    await archive.repair(Date.now() + 1000); // as if untouched for 5 minutes
    expect((await uploader().pass()).uploaded).toEqual([`p/${JOB}/${name}`, `p/${JOB}/index.cdxj`]);
  });
});
