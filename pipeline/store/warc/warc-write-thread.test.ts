// The WARC writer thread: writes asked for in one turn of the event loop (several crawls, several pages) are written
// whole and indexed, the payloads as given; a write that fails rejects with its error and the thread goes on; a close
// waits for the writes asked for before it.
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import type { HttpExchange } from "./http-exchange.ts";
import { WarcWriteThread } from "./warc-write-thread.ts";

const exchange = (url: string, payload: Buffer): HttpExchange => ({
  url, requestHead: `GET ${new URL(url).pathname} HTTP/1.1\r\n\r\n`, statusLine: "HTTP/1.1 200 OK", statusCode: 200,
  headers: [["Content-Type", "text/html"]], payload, at: Date.UTC(2026, 10, 28),
});

describe("WarcWriteThread", () => {
  let root = "";
  let thread: WarcWriteThread | undefined;
  afterEach(async () => {
    await thread?.close();
    await rm(root, { recursive: true, force: true });
  });

  it("writes the pages of several crawls asked for at once, each whole and indexed; a failed write rejects, the thread goes on", async () => {
    root = await mkdtemp(join(tmpdir(), "warc-thread-"));
    thread = new WarcWriteThread({ root, maxFileBytes: 1e9, prefix: "T", host: "h-1", software: "test" });
    await writeFile(join(root, "bad"), "a file where the crawl's directory would be");
    // payloads that are views into a larger buffer (as undici's chunks are): only their own bytes are archived
    const slab = Buffer.from("x".repeat(100) + "<p>page one</p>" + "y".repeat(100) + "<p>page two</p>");
    const one = slab.subarray(100, 115);
    const two = slab.subarray(215, 230);
    const page = (crawlId: string, url: string, payload: Buffer) => thread!.write(crawlId, [{ kind: "exchange", exchange: exchange(url, payload), context: { crawlId, role: "page" } }]);
    const results = await Promise.allSettled([
      page("a", "https://a.test/1", one), page("b", "https://b.test/2", two), page("bad", "https://c.test/3", one), page("a", "https://a.test/4", two),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    expect(String((results[2] as PromiseRejectedResult).reason)).toMatch(/EEXIST|ENOTDIR/);
    await page("a", "https://a.test/5", Buffer.from("after"));
    await thread.closeCrawl("a");
    const names = (await readdir(join(root, "a"))).filter((n) => n.endsWith(".warc.gz"));
    expect(names).toHaveLength(1);
    const text = gunzipSync(await readFile(join(root, "a", names[0]!))).toString();
    expect(text.match(/WARC-Type: response/g)).toHaveLength(3);
    expect(text).toContain("\r\n\r\n<p>page one</p>\r\n\r\n");
    expect(text).toContain("\r\n\r\n<p>page two</p>\r\n\r\n");
    expect(text).not.toContain("xxx");
    const index = await readFile(join(root, "a", `${names[0]}.cdxj`), "utf8");
    expect(index.split("\n").filter((l) => l.startsWith("test,a)/")).length).toBe(3);
    expect(index.trimEnd().split("\n").at(-1)).toMatch(/^#end \d+$/);
  });
});
