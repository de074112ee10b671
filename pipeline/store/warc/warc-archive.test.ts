import { appendFile, mkdtemp, readFile, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpExchange } from "./http-exchange.ts";
import { surt } from "./surt.ts";
import { WarcArchive } from "./warc-archive.ts";
import { base32, sha1Digest } from "./warc-record.ts";

const CRAWL = "0b6f7a4c-1f2e-4c1a-9d7e-2a3b4c5d6e7f";

function exchange(url: string, body: string, extra: Partial<HttpExchange> = {}): HttpExchange {
  return {
    url,
    requestHead: `GET ${new URL(url).pathname} HTTP/1.1\r\nhost: ${new URL(url).host}\r\n\r\n`,
    statusLine: "HTTP/1.1 200 OK",
    statusCode: 200,
    headers: [["Content-Type", "text/html; charset=utf-8"], ["Transfer-Encoding", "chunked"]],
    payload: Buffer.from(body),
    peerIp: "127.0.0.1",
    at: Date.UTC(2026, 10, 28, 12, 0, 0),
    ...extra,
  };
}

/** One record: WARC headers and block, read by itself from its offset. */
function recordAt(file: Buffer, offset: number, length: number): { headers: Record<string, string>; block: Buffer } {
  const raw = gunzipSync(file.subarray(offset, offset + length));
  const end = raw.indexOf("\r\n\r\n");
  const headers: Record<string, string> = {};
  for (const line of raw.subarray(0, end).toString().split("\r\n").slice(1)) {
    const i = line.indexOf(":");
    headers[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  const block = raw.subarray(end + 4, end + 4 + Number(headers["Content-Length"]));
  expect(raw.subarray(end + 4 + block.length).toString()).toBe("\r\n\r\n");
  return { headers, block };
}

describe("WarcArchive", () => {
  let root = "";
  afterEach(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("base32 is RFC 4648's", () => {
    expect(base32(Buffer.from("foobar"))).toBe("MZXW6YTBOI");
    expect(sha1Digest(Buffer.from(""))).toBe("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
  });

  it("surt keys", () => {
    expect(surt("http://www.Example.com:80/A?b=1&a=2")).toBe("com,example)/a?a=2&b=1");
    expect(surt("http://127.0.0.1:8080/x")).toBe("127.0.0.1:8080)/x");
  });

  it("writes request, response, metadata per URL with digests, an index at the records' offsets, revisits", async () => {
    root = await mkdtemp(join(tmpdir(), "warc-"));
    const archive = new WarcArchive({ root, maxFileBytes: 1e9 });
    const ctx = { crawlId: CRAWL, role: "page" as const, depth: 1, referrer: "http://a.test/" };
    await archive.archive([{ exchange: exchange("http://a.test/one", "<p>one</p>"), context: ctx }], CRAWL);
    await archive.archive([{ exchange: exchange("http://a.test/copy", "<p>one</p>"), context: ctx }], CRAWL);
    await archive.archive([{ exchange: exchange("http://a.test/nm", "", { statusCode: 304, statusLine: "HTTP/1.1 304 Not Modified", headers: [["ETag", '"x"']] }), context: ctx }], CRAWL);
    // a replay archives /one again: the index still lists it once, at its first capture
    await archive.archive([{ exchange: exchange("http://a.test/one", "<p>one</p>", { at: Date.UTC(2026, 10, 28, 12, 5) }), context: ctx }], CRAWL);
    await archive.close();
    const files = await archive.files(CRAWL);
    expect(files).toHaveLength(1);
    const file = await readFile(join(root, CRAWL, files[0]!.name));
    expect(files[0]!.bytes).toBe(file.length);
    expect(files[0]!.name).toMatch(/^TRAWL-\d{17}-00000-.+\.warc\.gz$/);

    const index = await archive.cdxj(CRAWL);
    expect(index.map((l) => l.split(" ")[0])).toEqual(["test,a)/copy", "test,a)/nm", "test,a)/one"]);
    const entries = index.map((l) => JSON.parse(l.slice(l.indexOf("{"))) as Record<string, string>);
    const one = entries[2]!;
    expect(one).toMatchObject({ url: "http://a.test/one", mime: "text/html", status: "200", filename: files[0]!.name, digest: sha1Digest(Buffer.from("<p>one</p>")).slice(5) });
    expect(index[2]!.split(" ")[1]).toBe("20261128120000");
    const response = recordAt(file, Number(one.offset), Number(one.length));
    expect(response.headers["WARC-Type"]).toBe("response");
    expect(response.headers["WARC-Target-URI"]).toBe("http://a.test/one");
    expect(response.headers["WARC-IP-Address"]).toBe("127.0.0.1");
    expect(response.headers["WARC-Block-Digest"]).toBe(sha1Digest(response.block));
    const payload = response.block.subarray(response.block.indexOf("\r\n\r\n") + 4);
    expect(payload.toString()).toBe("<p>one</p>");
    expect(response.headers["WARC-Payload-Digest"]).toBe(sha1Digest(payload));
    expect(response.block.toString()).toContain("X-Crawler-Transfer-Encoding: chunked");

    const copy = recordAt(file, Number(entries[0]!.offset), Number(entries[0]!.length));
    expect(copy.headers).toMatchObject({ "WARC-Type": "revisit", "WARC-Refers-To-Target-URI": "http://a.test/one", "WARC-Profile": "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest" });
    expect(entries[0]!.mime).toBe("warc/revisit");
    const nm = recordAt(file, Number(entries[1]!.offset), Number(entries[1]!.length));
    expect(nm.headers["WARC-Profile"]).toBe("http://netpreserve.org/warc/1.1/revisit/server-not-modified");

    // the whole file: warcinfo, then request / response / metadata for each URL, linked by WARC-Concurrent-To
    const all = gunzipSync(file).toString("latin1");
    const types = [...all.matchAll(/^WARC-Type: (\S+)/gm)].map((m) => m[1]);
    expect(types).toEqual(["warcinfo", ...Array(4).fill(["request", expect.stringMatching(/response|revisit/), "metadata"]).flat()]);
    expect(all).toMatch(/crawlId: 0b6f7a4c-1f2e-4c1a-9d7e-2a3b4c5d6e7f\r\nrole: page\r\ndepth: 1\r\nvia: http:\/\/a.test\//);
  });

  it("rolls to a new file past the size limit, each opening with warcinfo", async () => {
    root = await mkdtemp(join(tmpdir(), "warc-"));
    const archive = new WarcArchive({ root, maxFileBytes: 2000 });
    for (let i = 0; i < 6; i++) {
      const body = `<p>${i}</p>`.padEnd(3000, String.fromCharCode(65 + ((i * 7) % 26)) + String(i * 13));
      await archive.archive([{ exchange: exchange(`http://a.test/${i}`, body + Math.random()), context: { crawlId: CRAWL, role: "page" } }], CRAWL);
    }
    await archive.close();
    const files = await archive.files(CRAWL);
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) expect(gunzipSync(await readFile(join(root, CRAWL, f.name))).toString().startsWith("WARC/1.1\r\nWARC-Type: warcinfo")).toBe(true);
    expect(await archive.cdxj(CRAWL)).toHaveLength(6);
  });

  it("cuts a torn tail to the last whole append, and the sidecar with it", async () => {
    root = await mkdtemp(join(tmpdir(), "warc-"));
    const archive = new WarcArchive({ root, maxFileBytes: 1e9 });
    await archive.archive([{ exchange: exchange("http://a.test/one", "<p>one</p>"), context: { crawlId: CRAWL, role: "page" } }], CRAWL);
    await archive.close();
    const [file] = await archive.files(CRAWL);
    const path = join(root, CRAWL, file!.name);
    const whole = await readFile(path);
    // a kill in the middle of the next append: half a gzip member, and an index line without its #end
    await appendFile(path, whole.subarray(0, 100));
    await appendFile(`${path}.cdxj`, `test,a)/two 20261128120000 {"url":"http://a.test/two","filename":"${file!.name}","offset":"${whole.length}"}\n#en`);
    expect(await archive.repair(0)).toEqual([]); // written just now: a live writer may still extend it
    const old = new Date(Date.now() - 3_600_000);
    await utimes(path, old, old);
    expect(await archive.repair(Date.now() - 60_000)).toEqual([{ file: path, fromBytes: whole.length + 100, toBytes: whole.length }]);
    expect((await readFile(path)).equals(whole)).toBe(true);
    expect((await archive.cdxj(CRAWL)).map((l) => l.split(" ")[0])).toEqual(["test,a)/one"]);
    expect((await readFile(`${path}.cdxj`, "utf8")).endsWith(`#end ${whole.length}\n`)).toBe(true);
  });

  it("refuses crawl ids and names that would leave the root", async () => {
    root = await mkdtemp(join(tmpdir(), "warc-"));
    const archive = new WarcArchive({ root, maxFileBytes: 1e9 });
    expect(() => archive.crawlDir("../x")).toThrow();
    expect(await archive.filePath(CRAWL, "../../etc/passwd")).toBeNull();
  });
});
