// The fetcher's capture for web archives against a local HTTP server: each hop of a redirect, the status text and
// header fields as sent (case kept), the body as received (gzip stays gzip, a chunked body is whole), the request
// sent, the address connected to; an error page that fails the fetch is still captured.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import { UndiciFetcher } from "./fetcher.ts";

let server: Server;
let origin = "";
const fetcher = new UndiciFetcher({ userAgent: "trawl-test", maxBytes: 1_000_000, maxRedirects: 3, allowPrivate: true });
const GZ = gzipSync(Buffer.from("<p>zipped</p>"));

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === "/old") {
      res.writeHead(301, "Gone Over There", { Location: "/new", "X-Hop": "1" });
      return res.end("moved");
    }
    if (req.url === "/new") {
      res.writeHead(200, "Fine", { "Content-Type": "text/html", "Content-Encoding": "gzip", "X-Mixed-Case": "Yes" });
      res.write(GZ.subarray(0, 5));
      return res.end(GZ.subarray(5));
    }
    res.writeHead(404, { "Content-Type": "text/html" });
    res.end("<p>nothing</p>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await fetcher.close();
  server.close();
});

it("captures every hop as sent and received", async () => {
  const seen: HttpExchange[] = [];
  const result = await fetcher.fetch({ url: `${origin}/old`, timeoutMs: 5000, capture: (e) => seen.push(e) });
  expect(result.body).toBe("<p>zipped</p>");
  expect(seen.map((e) => [e.url, e.statusLine])).toEqual([[`${origin}/old`, "HTTP/1.1 301 Gone Over There"], [`${origin}/new`, "HTTP/1.1 200 Fine"]]);
  expect(seen[0]!.headers).toContainEqual(["X-Hop", "1"]);
  expect(seen[0]!.payload.toString()).toBe("moved");
  expect(seen[1]!.headers).toContainEqual(["X-Mixed-Case", "Yes"]);
  expect(seen[1]!.headers).toContainEqual(["Transfer-Encoding", "chunked"]);
  expect(seen[1]!.payload.equals(GZ)).toBe(true);
  expect(seen[1]!.peerIp).toBe("127.0.0.1");
  expect(seen[1]!.requestHead).toMatch(/^GET \/new HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n(.|\r\n)*user-agent: trawl-test\r\n(.|\r\n)*\r\n\r\n$/);
});

it("captures an error page that fails the fetch", async () => {
  const seen: HttpExchange[] = [];
  await expect(fetcher.fetch({ url: `${origin}/missing`, timeoutMs: 5000, capture: (e) => seen.push(e) })).rejects.toThrow(/HTTP 404/);
  expect(seen.map((e) => [e.statusCode, e.payload.toString()])).toEqual([[404, "<p>nothing</p>"]]);
});
