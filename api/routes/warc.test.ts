// The web-archive routes on a real HTTP server over a WarcArchive in a temporary directory: the listing, Range
// requests (one record by offset, 416 past the end), the CDXJ index, the job's team only (another team's job, or an
// archive whose job record expired and whose owner file names another team, is 404), expiry after
// WARC_RETENTION_HOURS, and a job without archives.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { createLogger } from "../../pipeline/runtime/logger.ts";
import { WarcArchive } from "../../pipeline/store/warc/warc-archive.ts";
import { createApp } from "../app.ts";
import { byteRange } from "./warc.ts";

const MINE = "11111111-1111-4111-8111-111111111111";
const OTHERS = "22222222-2222-4222-8222-222222222222";
const ORPHAN = "33333333-3333-4333-8333-333333333333";
const NONE = "44444444-4444-4444-8444-444444444444";
let server: Server;
let base = "";
let dir = "";
let now = Date.now();
const crawls: Record<string, { teamId: string; status: string }> = { [MINE]: { teamId: "bypass", status: "completed" }, [OTHERS]: { teamId: "team-b", status: "completed" }, [NONE]: { teamId: "bypass", status: "completed" } };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "trawl-warc-routes-"));
  const warc = new WarcArchive({ root: dir, maxFileBytes: 1e9 });
  for (const [id, teamId] of [[MINE, "bypass"], [OTHERS, "team-b"], [ORPHAN, "team-b"]] as const) {
    await warc.own(id, { teamId, kind: "crawl" });
    const exchange = { url: `http://a.test/${id}`, requestHead: "GET / HTTP/1.1\r\n\r\n", statusLine: "HTTP/1.1 200 OK", statusCode: 200, headers: [["Content-Type", "text/html"]] as [string, string][], payload: Buffer.from("<p>hi</p>"), at: now };
    await warc.archive([{ exchange, context: { crawlId: id, role: "page" } }], id);
  }
  await warc.close();
  const app = createApp({
    config: loadConfig({ WARC_RETENTION_HOURS: "1" }), log: createLogger("silent"), clock: { now: () => now }, ready: async () => true, warc,
    store: { getCrawl: async (id: string) => crawls[id] ?? null } as never, bus: {} as never, fetcher: {} as never, convert: {} as never, robots: {} as never, searchBackend: {} as never,
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe("web-archive routes", () => {
  it("list the files, serve one record by a Range request, and the index", async () => {
    const list = (await (await fetch(`${base}/v2/crawl/${MINE}/warc`)).json()) as any;
    expect(list).toMatchObject({ success: true, files: [{ name: expect.stringMatching(/\.warc\.gz$/), bytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }] });
    expect(list.files[0].url).toBe(`${base}/v2/crawl/${MINE}/warc/${list.files[0].name}`);
    const cdxj = await (await fetch(`${base}/v2/crawl/${MINE}/cdxj`)).text();
    const entry = JSON.parse(cdxj.slice(cdxj.indexOf("{")));
    const start = Number(entry.offset);
    const end = start + Number(entry.length) - 1;
    const part = await fetch(list.files[0].url, { headers: { range: `bytes=${start}-${end}` } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes ${start}-${end}/${list.files[0].bytes}`);
    expect(gunzipSync(Buffer.from(await part.arrayBuffer())).toString()).toMatch(/^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    expect((await fetch(list.files[0].url, { headers: { range: `bytes=${list.files[0].bytes}-` } })).status).toBe(416);
    expect((await fetch(list.files[0].url)).headers.get("content-length")).toBe(String(list.files[0].bytes));
    // the same archives under the batch path (one store, as every job route)
    expect((await fetch(`${base}/v2/batch/scrape/${MINE}/warc`)).status).toBe(200);
  });

  it("answer only the job's team; a job without archives, or past WARC_RETENTION_HOURS, is 404", async () => {
    for (const id of [OTHERS, ORPHAN]) {
      for (const path of ["warc", "cdxj"]) expect((await fetch(`${base}/v2/crawl/${id}/${path}`)).status, `${id} ${path}`).toBe(404);
    }
    const none = await fetch(`${base}/v2/crawl/${NONE}/warc`);
    expect(none.status).toBe(404);
    expect(((await none.json()) as any).error).toMatch(/no web archives/);
    expect((await fetch(`${base}/v2/crawl/${MINE}/warc/..%2F..%2Fetc%2Fpasswd`)).status).toBe(404);
    expect((await fetch(`${base}/v2/crawl/not-a-uuid/warc`)).status).toBe(400);
    now += 2 * 3_600_000;
    const expired = await fetch(`${base}/v2/crawl/${MINE}/cdxj`);
    expect(expired.status).toBe(404);
    expect(((await expired.json()) as any).error).toBe("Job expired");
  });

  it("parse byte ranges", () => {
    expect(byteRange(undefined, 100)).toBeNull();
    expect(byteRange("bytes=0-9", 100)).toEqual([0, 9]);
    expect(byteRange("bytes=90-", 100)).toEqual([90, 99]);
    expect(byteRange("bytes=-10", 100)).toEqual([90, 99]);
    expect(byteRange("bytes=95-200", 100)).toEqual([95, 99]);
    expect(byteRange("bytes=100-", 100)).toBe("bad");
    expect(byteRange("bytes=5-2", 100)).toBe("bad");
    expect(byteRange("bytes=0-1,5-6", 100)).toBeNull();
  });
});
