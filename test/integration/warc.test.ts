// Web archives in both modes: a crawl of a local site with `warc: true` (robots.txt, a sitemap, a gzip page, a chunked
// page, a PDF, a redirect, a 404, a page the browser renders) and its recrawl (a page answered 304), and a batch
// scrape; every WARC file is read by an independent reader (Webrecorder's Python warcio, scripts/warcio.sh): every
// record valid and its digests matching (`warcio check`), and the CDXJ index served by Trawl lists every URL once,
// at the offset and length of its response (or revisit) record, which a Range request reads by itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWarcSite, type WarcSite } from "../fixtures/warc-site.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";
import { checkArchives, setUpWarcio, tearDownWarcio } from "./warc-check.ts";

beforeAll(setUpWarcio, 200_000);
afterAll(tearDownWarcio);

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

  it("a batch scrape with warc: true is archived under /v2/batch/scrape, a page the browser fetched too; a job without warc has none", async () => {
    const started = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/about`, `${site.origin}/new`], warc: true });
    expect(started.status).toBe(200);
    await waitForEnd(trawl.api, started.body.id, 60_000, "batch/scrape");
    const { cdxj } = await checkArchives(trawl.api, "/v2/batch/scrape", started.body.id);
    expect(cdxj.map(({ entry }) => new URL(entry.url).pathname).sort()).toEqual(["/about", "/new"]);

    // a page only a browser may fetch (waitFor): the browser's own request of it is archived, and its DOM
    const browser = await postJson(`${trawl.api}/v2/batch/scrape`, { urls: [`${site.origin}/old`], waitFor: 50, warc: true });
    expect(browser.status).toBe(200);
    await waitForEnd(trawl.api, browser.body.id, 60_000, "batch/scrape");
    const rendered = await checkArchives(trawl.api, "/v2/batch/scrape", browser.body.id);
    expect(rendered.cdxj.map(({ entry }) => [new URL(entry.url).pathname, entry.status])).toEqual([["/new", "200"], ["/old", "301"]]);
    expect(rendered.records.map((r) => r["warc-type"])).toEqual(["warcinfo", "request", "response", "metadata", "request", "response", "metadata", "conversion", "metadata"]);

    const plain = await crawl(undefined);
    expect((await getJson(`${trawl.api}/v2/crawl/${plain}/warc`)).status).toBe(404);
    expect((await getJson(`${trawl.api}/v2/crawl/${plain}/cdxj`)).status).toBe(404);
    expect((await getJson(`${trawl.api}/v2/crawl/00000000-0000-4000-8000-000000000000/warc`)).status).toBe(404);
  });
});
