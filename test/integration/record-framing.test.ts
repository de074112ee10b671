// Record framing that no content can break (issue 31, item 2): `trawl all --embedded` as a child process crawls and
// scrapes pages holding U+2028, U+2029, NUL, lone surrogates (through JSON-LD into the json format), a lone CR and a
// ~1 MB line; it is stopped (cleanly, and separately with kill -9 once the documents were acknowledged), started again
// on the same DATA_DIR, and must start and serve the same documents byte for byte, the page cache included. A line
// splitter cut the logs' records at U+2028 / U+2029: the page cache then aborted every later start.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, getJson, postJson, waitForEnd } from "./harness.ts";
import { killHard, launchEmbedded, stopGracefully, type EmbeddedProcess } from "./embedded-process.ts";
import { freePort } from "./own-infra.ts";

// JSON-LD holds lone surrogates as JSON escapes (UTF-8 cannot carry them): the json format gets them as they are
const JSON_LD = '{"@context":"https://schema.org","@type":"Article","name":"lone \\ud800 high, \\udfff low","description":"para\\u2029graph \\u2028 line, nul \\u0000"}';
const PAGES: Record<string, string> = {
  "/": page("Index \u2028 page", `<p>See <a href="/odd.html">odd</a> and <a href="/big.html">big</a>.</p>`),
  "/odd.html": page(
    "Separators\u2028and\u2029more",
    `<h1>Line\u2028separator</h1><p>Paragraph\u2029separator, an entity nul &#0;, a raw nul \u0000 byte, a lone\rcarriage return, é and 𝄞.</p>`,
  ),
  // one line of ~1 MB (no newline), separators sprinkled through it
  "/big.html": page("Big", `<p>${"words and more words \u2028 é ".repeat(42_000)}</p>`),
};
const SCHEMA = { type: "object", properties: { name: { type: "string" }, description: { type: "string" } } };
const FORMATS = ["markdown", "html", "rawHtml", { type: "json", schema: SCHEMA }];
/** The fields compared before and after the stop. */
const FIELDS = ["markdown", "html", "rawHtml", "json"] as const;

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title><script type="application/ld+json">${JSON_LD}</script></head><body>${body}</body></html>`;
}

let server: Server;
let origin = "";
const hits = new Map<string, number>();
const dirs: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const html = PAGES[path];
    if (html === undefined) res.writeHead(404).end();
    else res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Doc = Record<string, unknown> & { metadata: { sourceURL: string; cacheState?: string } };
/** The compared fields of a document, by page path. */
const fieldsOf = (d: Doc) => [new URL(d.metadata.sourceURL).pathname, Object.fromEntries(FIELDS.map((f) => [f, d[f]]))] as const;

async function crawlDocs(api: string, id: string): Promise<Map<string, unknown>> {
  return new Map((await allChunks(api, id)).flatMap((c) => c.body.data as Doc[]).map(fieldsOf));
}

async function scrape(api: string, path: string, maxAge: number): Promise<{ id: string; doc: Doc }> {
  const res = await postJson(`${api}/v2/scrape`, { url: `${origin}${path}`, formats: FORMATS, maxAge });
  expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
  return { id: res.body.data.metadata.scrapeId, doc: res.body.data };
}

describe.each(["a clean stop", "kill -9"])("embedded mode, pages holding U+2028, U+2029, NUL, lone surrogates, after %s", (how) => {
  it("starts again and serves the same documents byte for byte, the page cache included", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "trawl-framing-"));
    dirs.push(dataDir);
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    let proc: EmbeddedProcess = await launchEmbedded(dataDir, port, { EXTRACT_PROVIDER: "rules" });
    try {
      const { body } = await postJson(`${api}/v2/crawl`, { url: `${origin}/`, limit: 10, scrapeOptions: { formats: FORMATS } });
      const ended = await waitForEnd(api, body.id, 60_000);
      expect(ended.at(-1)).toMatchObject({ status: "completed", completed: 3 });
      const crawled = await crawlDocs(api, body.id);
      expect([...crawled.keys()].sort()).toEqual(["/", "/big.html", "/odd.html"]);
      // the characters reached the documents (as each format keeps them)
      const odd = crawled.get("/odd.html") as Record<string, string> & { json: { name: string; description: string } };
      expect(odd.html).toContain("<h1>Line\u2028separator</h1><p>Paragraph\u2029separator, an entity nul \ufffd, a raw nul \u0000 byte");
      expect(odd.rawHtml).toContain("a raw nul \u0000 byte, a lone\rcarriage");
      expect(odd.json).toEqual({ name: "lone \ud800 high, \udfff low", description: "para\u2029graph \u2028 line, nul \u0000" });
      const big = crawled.get("/big.html") as { rawHtml: string; markdown: string };
      expect(Math.max(...big.rawHtml.split("\n").map((l) => Buffer.byteLength(l)))).toBeGreaterThan(1_000_000);
      expect(big.markdown.length).toBeGreaterThan(900_000);

      // scrapes that fill the page cache; the second one of each page is answered from it (so it is on disk)
      const scraped = new Map<string, { id: string; doc: Doc }>();
      for (const path of ["/odd.html", "/big.html"]) {
        scraped.set(path, await scrape(api, path, 3_600_000));
        expect((await scrape(api, path, 3_600_000)).doc.metadata.cacheState).toBe("hit");
      }
      const fetched = new Map(hits);

      if (how === "kill -9") await killHard(proc.child);
      else expect(await stopGracefully(proc.child)).toBe(0);
      proc = await launchEmbedded(dataDir, port, { EXTRACT_PROVIDER: "rules" });

      expect(await crawlDocs(api, body.id)).toEqual(crawled);
      expect((await getJson(`${api}/v2/crawl/${body.id}?limit=1`)).body).toMatchObject({ status: "completed", completed: 3 });
      for (const [path, before] of scraped) {
        // the stored scrape, and the page cache: the same fields, and not fetched again
        expect(fieldsOf((await getJson(`${api}/v2/scrape/${before.id}`)).body.data)).toEqual(fieldsOf(before.doc));
        const again = await scrape(api, path, 3_600_000);
        expect(again.doc.metadata.cacheState).toBe("hit");
        expect(fieldsOf(again.doc)).toEqual(fieldsOf(before.doc));
      }
      expect(hits).toEqual(fetched);
      expect(proc.output()).not.toMatch(/damaged|unreadable|dropped/);
    } finally {
      await killHard(proc.child);
    }
  });
});
