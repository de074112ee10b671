// Web archives in both modes: a crawl of a local site with `warc: true` (robots.txt, a sitemap, a gzip page, a chunked
// page, a PDF, a redirect, a 404, a page the browser renders) and its recrawl (a page answered 304), and a batch
// scrape; every WARC file is read by an independent reader (Webrecorder's Python warcio, scripts/warcio.sh): every
// record valid and its digests matching (`warcio check`), and the CDXJ index served by Trawl lists every URL once,
// at the offset and length of its response (or revisit) record, which a Range request reads by itself.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarcSite, type WarcSite } from "../fixtures/warc-site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const run = promisify(execFile);
let warcio = "";
let dir = "";

beforeAll(async () => {
  await run("bash", ["scripts/warcio.sh", "install"], { timeout: 180_000 });
  warcio = (await run("bash", ["scripts/warcio.sh", "bin"])).stdout.trim();
  dir = await mkdtemp(join(tmpdir(), "warc-check-"));
}, 200_000);
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface IndexEntry { url: string; mime: string; status: string; digest: string; length: string; offset: string; filename: string }
interface WarcioEntry { "warc-type": string; "warc-target-uri"?: string; "warc-profile"?: string; offset: string; length: string; file: string }

/** Downloads the job's WARC files, checks them with warcio, and checks its CDXJ against warcio's own index. */
async function checkArchives(api: string, base: string, id: string): Promise<{ cdxj: { key: string; entry: IndexEntry }[]; records: WarcioEntry[] }> {
  const list = await getJson(`${api}${base}/${id}/warc`);
  expect(list.status).toBe(200);
  expect(list.body.success).toBe(true);
  const files = list.body.files as { name: string; bytes: number; sha256: string; url: string }[];
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

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: WarcSite;
  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode, render: "auto", renderConcurrency: 1 }), startWarcSite()]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  const crawl = async (warc: boolean | undefined) => {
    const body = { url: `${site.origin}/`, limit: 20, ...(warc === undefined ? {} : { warc }), scrapeOptions: { formats: ["markdown", { type: "changeTracking", tag: `warc-${mode}` }] } };
    const started = await postJson(`${trawl.api}/v2/crawl`, body);
    expect(started.status).toBe(200);
    expect((await waitForEnd(trawl.api, started.body.id, 120_000)).at(-1).status).toBe("completed");
    return started.body.id as string;
  };

  it("a crawl with warc: true is archived whole, and its recrawl's 304 is a revisit", async () => {
    const first = await crawl(true);
    const { cdxj, records } = await checkArchives(trawl.api, "/v2/crawl", first);
    const byPath = Object.fromEntries(cdxj.map(({ entry }) => [new URL(entry.url).pathname, entry]));
    expect(Object.keys(byPath).sort()).toEqual(["/", "/about", "/app", "/cond", "/doc.pdf", "/missing", "/new", "/old", "/robots.txt", "/sitemap.xml"]);
    expect(byPath["/old"]).toMatchObject({ status: "301" });
    expect(byPath["/missing"]).toMatchObject({ status: "404", mime: "text/html" });
    expect(byPath["/doc.pdf"]).toMatchObject({ status: "200", mime: "application/pdf" });
    expect(byPath["/robots.txt"]).toMatchObject({ status: "200", mime: "text/plain" });
    // request, response, metadata for each URL; the rendered page's DOM as a conversion record
    const of = (path: string) => records.filter((r) => r["warc-target-uri"] && new URL(r["warc-target-uri"]).pathname === path).map((r) => r["warc-type"]);
    expect(of("/")).toEqual(["request", "response", "metadata"]);
    expect(of("/app")).toEqual(["request", "response", "metadata", "conversion", "metadata"]);

    // the recrawl sends the ETag: the 304 is a revisit (server-not-modified)
    const second = await crawl(true);
    expect(site.hits.get("/cond 304")).toBe(1);
    const again = await checkArchives(trawl.api, "/v2/crawl", second);
    expect(again.cdxj.find(({ entry }) => entry.url.endsWith("/cond"))?.entry).toMatchObject({ status: "304", mime: "warc/revisit" });
    expect(again.records.find((r) => r["warc-type"] === "revisit")?.["warc-profile"]).toBe("http://netpreserve.org/warc/1.1/revisit/server-not-modified");
  });

  it("a batch scrape with warc: true is archived under /v2/batch/scrape; a job without warc has none", async () => {
    const started = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/about`, `${site.origin}/new`], warc: true });
    expect(started.status).toBe(200);
    await waitForEnd(trawl.api, started.body.id, 60_000, "batch/scrape");
    const { cdxj } = await checkArchives(trawl.api, "/v2/batch/scrape", started.body.id);
    expect(cdxj.map(({ entry }) => new URL(entry.url).pathname).sort()).toEqual(["/about", "/new"]);

    const plain = await crawl(undefined);
    expect((await getJson(`${trawl.api}/v2/crawl/${plain}/warc`)).status).toBe(404);
    expect((await getJson(`${trawl.api}/v2/crawl/${plain}/cdxj`)).status).toBe(404);
    expect((await getJson(`${trawl.api}/v2/crawl/00000000-0000-4000-8000-000000000000/warc`)).status).toBe(404);
  });
});
