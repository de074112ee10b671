// The fetcher's validators against a raw local HTTP server that sees request bytes as they arrive: an ETag and a
// Last-Modified with non-ASCII bytes come back byte for byte in If-None-Match / If-Modified-Since (undici decodes
// response header values as latin1 and encodes request header values as latin1 from 7.20; 7.16-7.19 decoded UTF-8,
// so a UTF-8 ETag went back double-encoded and a byte-comparing server never answered 304), and a 304 to a request
// without validators is a failed page, not an empty one.
import { createServer, type AddressInfo, type Server } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PageError } from "../runtime/errors.ts";
import { UndiciFetcher } from "./fetcher.ts";

const ETAG = Buffer.concat([Buffer.from('W/"caf'), Buffer.from("é-ü", "utf8"), Buffer.from([0xff, 0x80]), Buffer.from('"')]);
const LAST_MODIFIED = Buffer.concat([Buffer.from("Fri, 20 Nov 2026 08:00:00 GMT "), Buffer.from("ĳ", "utf8")]);

/** A request header's value as the bytes that arrived, or null. */
function headerBytes(head: Buffer, name: string): Buffer | null {
  for (let start = head.indexOf("\r\n") + 2; start > 1 && start < head.length;) {
    const next = head.indexOf("\r\n", start);
    const end = next < 0 ? head.length : next;
    const line = head.subarray(start, end);
    const colon = line.indexOf(":");
    if (colon > 0 && line.subarray(0, colon).toString("latin1").toLowerCase() === name) return line.subarray(colon + 1).subarray(line[colon + 1] === 0x20 ? 1 : 0);
    start = end + 2;
  }
  return null;
}

let server: Server;
let origin = "";
const fetcher = new UndiciFetcher({ userAgent: "test", maxBytes: 1_000_000, maxRedirects: 3, allowPrivate: true });

beforeAll(async () => {
  server = createServer((socket) => {
    let head = Buffer.alloc(0);
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      const request = head.subarray(0, end);
      const path = request.toString("latin1").split(" ")[1];
      const same = (name: string, value: Buffer) => headerBytes(request, name)?.equals(value) === true;
      const notModified = path === "/always-304" || same("if-none-match", ETAG) || same("if-modified-since", LAST_MODIFIED);
      const validators = Buffer.concat([Buffer.from("etag: "), ETAG, Buffer.from("\r\nlast-modified: "), LAST_MODIFIED, Buffer.from("\r\n")]);
      const status = Buffer.from(notModified ? "HTTP/1.1 304 Not Modified\r\n" : "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 5\r\n");
      socket.end(Buffer.concat([status, Buffer.from("connection: close\r\n"), path === "/always-304" ? Buffer.alloc(0) : validators, Buffer.from(notModified ? "\r\n" : "\r\nhello")]));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await fetcher.close();
  await new Promise((r) => server.close(r));
});

describe("validators", () => {
  it("are returned as the bytes received (latin1) and sent back byte for byte: the server answers 304", async () => {
    const first = await fetcher.fetch({ url: `${origin}/page`, timeoutMs: 10_000 });
    expect(first.statusCode).toBe(200);
    expect(Buffer.from(first.etag ?? "", "latin1").toString("hex")).toBe(ETAG.toString("hex"));
    expect(Buffer.from(first.lastModified ?? "", "latin1").toString("hex")).toBe(LAST_MODIFIED.toString("hex"));
    const conditional: Record<string, string>[] = [{ "if-none-match": first.etag ?? "" }, { "if-modified-since": first.lastModified ?? "" }];
    for (const headers of conditional) {
      const again = await fetcher.fetch({ url: `${origin}/page`, timeoutMs: 10_000, headers });
      expect({ headers: Object.keys(headers), status: again.statusCode }).toEqual({ headers: Object.keys(headers), status: 304 });
    }
  });

  it("a 304 to a request without them is SCRAPE_UNEXPECTED_NOT_MODIFIED; with them it is the answer", async () => {
    const err = await fetcher.fetch({ url: `${origin}/always-304`, timeoutMs: 10_000, headers: { "x-other": "1" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageError);
    expect((err as PageError).code).toBe("SCRAPE_UNEXPECTED_NOT_MODIFIED");
    const conditional = await fetcher.fetch({ url: `${origin}/always-304`, timeoutMs: 10_000, headers: { "If-None-Match": '"x"' } });
    expect(conditional.statusCode).toBe(304);
  });
});
