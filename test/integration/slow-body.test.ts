// A body that arrives slower than the fetch time limit (issue 31, item 7): the headers come at once, then the body
// trickles. The time limit falls while the body is read, and the error it raises (a DOMException whose `code` is the
// number 23) once crashed the fetcher's error handling: the scrape answered 500 UNKNOWN_ERROR and a crawl recorded
// BUG without retrying. It is a timeout: 408 SCRAPE_TIMEOUT for a scrape, a retried page and a SCRAPE_TIMEOUT error row
// for a crawl. Plain and gzip-encoded bodies (the gzip one fails inside the inflater).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { constants, createGzip } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

interface TrickleSite {
  origin: string;
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** `/` links to `/slow` and `/slow-gzip`, which send their headers and then a few bytes every 200 ms, for ever. */
async function startTrickleSite(): Promise<TrickleSite> {
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === "/") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<html><head><title>Home</title></head><body><p>Home page.</p><a href="/slow">slow</a> <a href="/slow-gzip">slow gzip</a></body></html>`);
      return;
    }
    if (path !== "/slow" && path !== "/slow-gzip") {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found");
      return;
    }
    const gzip = path === "/slow-gzip";
    res.writeHead(200, { "content-type": "text/html", ...(gzip ? { "content-encoding": "gzip" } : {}) });
    const zip = gzip ? createGzip() : undefined;
    zip?.pipe(res);
    const send = (text: string) => (zip ? zip.write(text, () => zip.flush(constants.Z_SYNC_FLUSH)) : res.write(text));
    send("<html><head><title>Slow</title></head><body>");
    const timer = setInterval(() => send("<p>still coming</p>"), 200);
    res.on("close", () => {
      clearInterval(timer);
      zip?.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe.each(MODES)("%s mode: a body slower than the time limit", (mode) => {
  let trawl: Instance;
  let site: TrickleSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startTrickleSite(), startTrawl({ mode, fetchRetries: 1 })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("a scrape answers 408 SCRAPE_TIMEOUT in the anchor's shape", async () => {
    for (const path of ["/slow", "/slow-gzip"]) {
      const started = Date.now();
      const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}${path}`, timeout: 1000 });
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(408);
      expect(res.body).toEqual({ success: false, code: "SCRAPE_TIMEOUT", error: "the body (HTTP 200) did not arrive within 1000 ms" });
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });

  it("a crawl retries the page and records SCRAPE_TIMEOUT, not BUG", async () => {
    site.hits.clear();
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/`, limit: 10, scrapeOptions: { timeout: 1000 } });
    expect(res.status).toBe(200);
    const end = (await waitForEnd(trawl.api, res.body.id, 60_000)).at(-1);
    expect(end).toMatchObject({ status: "completed", completed: 1 });
    // FETCH_RETRIES=1: each slow page is asked for twice
    expect(site.hits.get("/slow")).toBe(2);
    expect(site.hits.get("/slow-gzip")).toBe(2);
    const errors = (await getJson(`${trawl.api}/v2/crawl/${res.body.id}/errors`)).body.errors as { url: string; code: string; error: string }[];
    expect(errors.map((e) => `${e.code} ${e.url}`).sort()).toEqual([`SCRAPE_TIMEOUT ${site.origin}/slow`, `SCRAPE_TIMEOUT ${site.origin}/slow-gzip`]);
    for (const e of errors) expect(e.error).toBe("the body (HTTP 200) did not arrive within 1000 ms");
  });
});
