// Conditional fetches against a server that reads request headers as bytes, in both modes: a 304 to a request that
// carried no validators is a failed page (SCRAPE_UNEXPECTED_NOT_MODIFIED, not billed), never a new empty document;
// an ETag or Last-Modified with non-ASCII bytes comes back byte for byte in If-None-Match / If-Modified-Since, so a
// server that compares bytes answers 304 on the next scrape.
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** Validators as raw bytes: UTF-8 "é" and "ü" (two bytes each), and a lone 0xff byte. */
const ETAG = Buffer.concat([Buffer.from('"caf'), Buffer.from("é-ü", "utf8"), Buffer.from([0xff]), Buffer.from('"')]);
const LAST_MODIFIED = Buffer.concat([Buffer.from("Fri, 20 Nov 2026 08:00:00 GMT "), Buffer.from("ĳ", "utf8")]);

interface ByteSite {
  origin: string;
  /** responses by path and status */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** The value of a request header as the bytes that arrived (no decoding), or null. */
function headerBytes(head: Buffer, name: string): Buffer | null {
  let start = head.indexOf("\r\n") + 2;
  while (start > 1 && start < head.length) {
    const end = head.indexOf("\r\n", start);
    const line = head.subarray(start, end < 0 ? head.length : end);
    const colon = line.indexOf(":");
    if (colon > 0 && line.subarray(0, colon).toString("latin1").toLowerCase() === name) {
      let v = colon + 1;
      while (line[v] === 0x20) v++;
      return line.subarray(v);
    }
    if (end < 0) break;
    start = end + 2;
  }
  return null;
}

/** A raw HTTP/1.1 server (one request per connection): Node's parser would decode header values before we see them. */
async function startByteSite(): Promise<ByteSite> {
  const hits = new Map<string, number>();
  const html = (title: string) => `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>A page that never changes, with validators in raw bytes.</p></main></body></html>`;
  const answer = (socket: Socket, head: Buffer) => {
    const path = head.subarray(0, head.indexOf("\r\n")).toString("latin1").split(" ")[1] ?? "/";
    const send = (status: number, headers: Buffer[], body = "") => {
      hits.set(`${path} ${status}`, (hits.get(`${path} ${status}`) ?? 0) + 1);
      const lines = [Buffer.from(`HTTP/1.1 ${status} ${status === 304 ? "Not Modified" : "OK"}\r\ncontent-type: text/html; charset=utf-8\r\nconnection: close\r\n`), ...headers.flatMap((h) => [h, Buffer.from("\r\n")])];
      socket.end(Buffer.concat([...lines, Buffer.from(status === 304 ? "\r\n" : `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)]));
    };
    const etagLine = Buffer.concat([Buffer.from("etag: "), ETAG]);
    const lastModifiedLine = Buffer.concat([Buffer.from("last-modified: "), LAST_MODIFIED]);
    if (path === "/always-304") return send(304, []); // whatever the request carried
    if (path === "/etag") return headerBytes(head, "if-none-match")?.equals(ETAG) ? send(304, [etagLine]) : send(200, [etagLine], html("ETag"));
    if (path === "/last-modified") {
      return headerBytes(head, "if-modified-since")?.equals(LAST_MODIFIED) ? send(304, []) : send(200, [lastModifiedLine], html("Last-Modified"));
    }
    return send(404, [], html("Not found"));
  };
  const server: Server = createServer((socket) => {
    let head = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end >= 0) answer(socket, head.subarray(0, end));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ByteSite;
  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode }), startByteSite()]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  const credits = async () => (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data.creditsUsed as number;
  const tracking = (tag: string) => ({ formats: ["markdown", { type: "changeTracking", modes: ["git-diff"], tag }] });
  /** A batch scrape (the fetch stage: conditional requests from the page's last snapshot) to its end: its documents. */
  const batch = async (urls: string[], options: object): Promise<{ id: string; docs: any[] }> => {
    const started = await postJson(`${trawl.api}/v2/batch/scrape`, { urls, ...options });
    expect(started.status).toBe(200);
    expect((await waitForEnd(trawl.api, started.body.id, 60_000, "batch/scrape")).at(-1).status).toBe("completed");
    return { id: started.body.id, docs: (await allChunks(trawl.api, started.body.id, "", "batch/scrape")).flatMap((c) => c.body.data) };
  };

  it("a 304 to a request without validators fails the page with a clear code and is not billed (scrape and batch)", async () => {
    const url = `${site.origin}/always-304`;
    const before = await credits();
    for (const options of [{}, tracking(`unsolicited-${mode}`)]) {
      const res = await postJson(`${trawl.api}/v2/scrape`, { url, ...options });
      expect({ status: res.status, success: res.body.success, code: res.body.code }).toEqual({ status: 500, success: false, code: "SCRAPE_UNEXPECTED_NOT_MODIFIED" });
    }
    const { id, docs } = await batch([url], tracking(`unsolicited-batch-${mode}`));
    expect(docs).toEqual([]); // a failed page has no document
    const errors = (await getJson(`${trawl.api}/v2/batch/scrape/${id}/errors`)).body.errors as { url: string; code?: string }[];
    expect(errors.map((e) => [e.url, e.code])).toEqual([[url, "SCRAPE_UNEXPECTED_NOT_MODIFIED"]]);
    expect(await credits()).toBe(before);
    expect(site.hits.get("/always-304 304")).toBe(3);
  });

  it("an ETag and a Last-Modified with non-ASCII bytes are sent back byte for byte: the recrawl gets its 304", async () => {
    const urls = [`${site.origin}/etag`, `${site.origin}/last-modified`];
    const options = tracking(`bytes-${mode}`);
    const status = (docs: any[]) => docs.map((d) => [new URL(d.metadata.sourceURL).pathname, d.changeTracking?.changeStatus]).sort();
    const { docs: first } = await batch(urls, options);
    expect(status(first)).toEqual([["/etag", "new"], ["/last-modified", "new"]]);
    const { docs: second } = await batch(urls, options);
    expect(status(second)).toEqual([["/etag", "same"], ["/last-modified", "same"]]);
    // the server compared the bytes it sent with the bytes that came back, and answered 304
    expect(Object.fromEntries(site.hits)).toMatchObject({ "/etag 200": 1, "/etag 304": 1, "/last-modified 200": 1, "/last-modified 304": 1 });
  });
});
