// The changeTracking format and conditional fetches through the official JS SDK, in both modes: a site crawled twice
// with a change between (a page edited, one added, one no longer linked, one answering 304, one with the same body)
// gives exactly the expected statuses and diffs; single scrapes and batch scrapes compare too; tags separate histories.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startChangingSite, type ChangingSite } from "../fixtures/changing-site.ts";
import { MODES, postJson, startTrawl, type Instance } from "./harness.ts";

type Doc = { markdown?: string; json?: unknown; metadata?: { sourceURL?: string; statusCode?: number }; changeTracking?: any };

const TRACKING = { type: "changeTracking" as const, modes: ["git-diff" as const, "json" as const], schema: { type: "object", properties: { price: { type: "string" } } } };

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ChangingSite;
  let fc: Firecrawl;

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode }), startChangingSite()]);
    fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  const byPath = (docs: Doc[]) => new Map(docs.map((d) => [new URL(String(d.metadata?.sourceURL)).pathname, d]));
  const crawl = async () => {
    const job = await fc.crawl(site.origin, { limit: 20, sitemap: "skip", scrapeOptions: { formats: ["markdown", TRACKING] }, pollInterval: 1, timeout: 120 });
    expect(job.status).toBe("completed");
    return byPath(job.data as Doc[]);
  };

  const reused = async () => (await trawl.running.metrics.pagesConverted.get()).values.find((v) => v.labels.outcome === "reused")?.value ?? 0;

  it("a recrawl reports new, changed, same (304 and same body) and removed pages with their diffs", async () => {
    const first = await crawl();
    expect(await reused()).toBe(0);
    expect([...first.keys()].sort()).toEqual(["/", "/etag", "/gone", "/price", "/static"]);
    for (const d of first.values()) expect(d.changeTracking).toEqual({ previousScrapeAt: null, changeStatus: "new", visibility: "visible" });
    // json was extracted for the json mode only: not in the documents
    expect(first.get("/price")?.json).toBeUndefined();

    site.advance();
    const second = await crawl();
    expect([...second.keys()].sort()).toEqual(["/", "/etag", "/gone", "/new", "/price", "/static"]);
    const status = Object.fromEntries([...second].map(([p, d]) => [p, [d.changeTracking?.changeStatus, d.changeTracking?.visibility]]));
    expect(status).toEqual({
      "/": ["changed", "visible"], "/price": ["changed", "visible"], "/etag": ["same", "visible"], "/static": ["same", "visible"],
      "/new": ["new", "visible"], "/gone": ["removed", "hidden"],
    });
    for (const p of ["/", "/price", "/etag", "/static", "/gone"]) expect(second.get(p)?.changeTracking?.previousScrapeAt).toMatch(/^\d{4}-\d\d-\d\dT/);

    const price = second.get("/price")?.changeTracking;
    expect(price.diff.text).toContain("-10 EUR");
    expect(price.diff.text).toContain("+12 EUR");
    expect(price.diff.text.startsWith("@@ -")).toBe(true);
    const changes = price.diff.json.files[0].chunks.flatMap((c: any) => c.changes);
    expect(changes).toContainEqual(expect.objectContaining({ type: "del", del: true, content: "-10 EUR" }));
    expect(changes).toContainEqual(expect.objectContaining({ type: "add", add: true, content: "+12 EUR" }));
    expect(price.json).toEqual({ price: { previous: "10 EUR", current: "12 EUR" } });
    const home = second.get("/")?.changeTracking;
    expect(home.diff.text).toMatch(/^-.*\/gone/m);
    expect(home.diff.text).toMatch(/^\+.*\/new/m);
    expect(second.get("/etag")?.changeTracking.diff).toBeUndefined();

    // the 304: one conditional request answered without a body, and the stored document served as it was
    expect(site.hits.get("/etag 304")).toBe(1);
    expect(site.hits.get("/etag 200")).toBe(1);
    expect(second.get("/etag")?.markdown).toBe(first.get("/etag")?.markdown);
    expect(second.get("/static")?.markdown).toBe(first.get("/static")?.markdown);
    // neither /etag (304) nor /static (same body) was converted again
    expect(await reused()).toBe(2);
    // removed pages are not fetched, and not counted
    expect(site.hits.get("/gone 404")).toBeUndefined();
    expect(second.get("/gone")?.markdown).toBe("");

    // a third crawl with nothing changed: every page the same, the removed page not reported again
    const third = await crawl();
    expect(Object.fromEntries([...third].map(([p, d]) => [p, d.changeTracking?.changeStatus]))).toEqual({
      "/": "same", "/price": "same", "/etag": "same", "/static": "same", "/new": "same",
    });
    expect(site.hits.get("/etag 304")).toBe(2);
    // /, /static, /new (same bodies) and /etag (304); /price's body changed from the first crawl but not since the second
    expect(await reused()).toBe(2 + 5);
  });

  it("single scrapes compare with the team's history; a tag is a history of its own; markdown is required", async () => {
    const url = `${site.origin}/static`;
    const formats = ["markdown" as const, { type: "changeTracking" as const, modes: ["git-diff" as const], tag: "scrapes" }];
    const a = await fc.scrape(url, { formats });
    expect(a.changeTracking).toMatchObject({ previousScrapeAt: null, changeStatus: "new" });
    const b = await fc.scrape(url, { formats });
    expect(b.changeTracking).toMatchObject({ changeStatus: "same", visibility: "visible" });
    expect(Date.parse(b.changeTracking?.previousScrapeAt as string)).toBeGreaterThan(0);
    const other = await fc.scrape(url, { formats: ["markdown", { type: "changeTracking", modes: [], tag: "other" }] });
    expect(other.changeTracking).toMatchObject({ changeStatus: "new" });

    const refused = await postJson(`${trawl.api}/v2/scrape`, { url, formats: [{ type: "changeTracking" }] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("The changeTracking format requires the markdown format to be specified as well");
    await expect(fc.scrape(url, { formats: [{ type: "changeTracking", modes: ["git-diff"] }] })).rejects.toThrow(/requires the markdown format/);
  });

  it("batch scrapes compare each URL (and report no removed pages)", async () => {
    const urls = [`${site.origin}/price`, `${site.origin}/new`];
    const options = { formats: ["markdown" as const, { type: "changeTracking" as const, modes: ["git-diff" as const], tag: "batch" }] };
    const one = await fc.batchScrape(urls, { options, pollInterval: 1, timeout: 120 });
    expect((one.data as Doc[]).map((d) => d.changeTracking?.changeStatus)).toEqual(["new", "new"]);
    const two = await fc.batchScrape([urls[0] as string], { options, pollInterval: 1, timeout: 120 });
    expect((two.data as Doc[]).map((d) => d.changeTracking?.changeStatus)).toEqual(["same"]);
  });
});
