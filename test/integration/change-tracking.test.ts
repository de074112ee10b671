// The changeTracking format and conditional fetches through the official JS SDK, in both modes: a site crawled twice
// with a change between (a page edited, one added, one no longer linked, one answering 304, one with the same body)
// gives exactly the expected statuses and diffs; single scrapes and batch scrapes compare too; tags separate histories.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { startChangingSite, type ChangingSite } from "../fixtures/changing-site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { validator } from "../../schemas/index.ts";
import { MODES, postJson, startTrawl, type Instance } from "./harness.ts";
import { readTopic, type TopicReader } from "./topic-reader.ts";

type Doc = { markdown?: string; json?: unknown; metadata?: { sourceURL?: string; statusCode?: number }; changeTracking?: any };

const TRACKING = { type: "changeTracking" as const, modes: ["git-diff" as const, "json" as const], schema: { type: "object", properties: { price: { type: "string" } } } };

const SECRET = "change-feed-secret";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: ChangingSite;
  let fc: Firecrawl;
  let receiver: Receiver;
  let changes: TopicReader;
  /** the three crawls of the first test and the two batches of the last one, in order */
  const crawlIds: string[] = [];
  const batchIds: string[] = [];

  beforeAll(async () => {
    [trawl, site, receiver] = await Promise.all([startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: SECRET }), startChangingSite(), startReceiver(SECRET)]);
    fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
    // the change feed as a downstream consumer reads it: kcat (cluster mode) or a consumer of the embedded bus
    changes = readTopic(trawl, "crawl.changes");
  });

  afterAll(async () => {
    await changes?.stop();
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  const byPath = (docs: Doc[]) => new Map(docs.map((d) => [new URL(String(d.metadata?.sourceURL)).pathname, d]));
  const crawl = async () => {
    const job = await fc.crawl(site.origin, { limit: 20, sitemap: "skip", scrapeOptions: { formats: ["markdown", TRACKING] }, webhook: receiver.url, pollInterval: 1, timeout: 120 });
    expect(job.status).toBe("completed");
    crawlIds.push(job.id);
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
    const one = await fc.batchScrape(urls, { options, webhook: receiver.url, pollInterval: 1, timeout: 120 });
    expect((one.data as Doc[]).map((d) => d.changeTracking?.changeStatus)).toEqual(["new", "new"]);
    const two = await fc.batchScrape([urls[0] as string], { options, webhook: receiver.url, pollInterval: 1, timeout: 120 });
    expect((two.data as Doc[]).map((d) => d.changeTracking?.changeStatus)).toEqual(["same"]);
    batchIds.push(one.id as string, two.id as string);
  });

  /**
   * The records of crawl.changes of one job, once `expected` are there (every record is written before the job's
   * crawl.completed, but the embedded reader, another consumer, may see them a moment after the webhook arrived).
   */
  const feedOf = async (jobId: string, expected: number) => {
    await completedHook(jobId);
    const read = async () => (await changes.messages()).filter(([key]) => key === jobId);
    const end = Date.now() + 15_000;
    while ((await read()).length < expected && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    const records = await read();
    expect(records.every(([, value]) => value.crawlId === jobId && validator("crawl-change")(value))).toBe(true);
    return records.map(([, value]) => value);
  };
  const completedHook = async (jobId: string) => {
    const end = Date.now() + 30_000;
    const done = () => receiver.received.find((r) => r.id === jobId && r.type.endsWith(".completed"));
    while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    return done()?.body;
  };
  const statusByPath = (records: any[]) => Object.fromEntries(records.map((r) => [new URL(r.url).pathname, [r.changeStatus, r.visibility]]));

  it("crawl.changes has one record per new, changed and removed page, with its diff, none for same pages", async () => {
    expect(crawlIds).toHaveLength(3);
    const [first, second, third] = await Promise.all(crawlIds.map((id, i) => feedOf(id, [5, 4, 0][i] as number)));
    expect(statusByPath(first ?? [])).toEqual({ "/": ["new", "visible"], "/etag": ["new", "visible"], "/gone": ["new", "visible"], "/price": ["new", "visible"], "/static": ["new", "visible"] });
    expect(first?.every((r) => r.previousScrapeAt === null && r.statusCode === 200 && r.teamId === "bypass" && r.diff === undefined)).toBe(true);

    expect(statusByPath(second ?? [])).toEqual({ "/": ["changed", "visible"], "/price": ["changed", "visible"], "/new": ["new", "visible"], "/gone": ["removed", "hidden"] });
    expect(second?.length).toBe(4);
    const byPath = new Map(second?.map((r) => [new URL(r.url).pathname, r]));
    const price = byPath.get("/price");
    expect(price.diff).toContain("-10 EUR");
    expect(price.diff).toContain("+12 EUR");
    expect(price.json).toEqual({ price: { previous: "10 EUR", current: "12 EUR" } });
    expect(price.previousScrapeAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(price.changeId).toBe(`${crawlIds[1]}|${price.urlKey}`);
    // the page no longer reached: found at the crawl's end, so after the pages' records; no HTTP status
    const gone = second?.at(-1);
    expect(new URL(gone.url).pathname).toBe("/gone");
    expect(gone.statusCode).toBeUndefined();
    expect(gone.previousScrapeAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(new Set(second?.map((r) => r.changeId)).size).toBe(4);

    expect(third).toEqual([]);
  });

  it("webhooks: crawl.page carries changeTracking, crawl.completed the counts by change status", async () => {
    const summaries = await Promise.all(crawlIds.map(completedHook));
    expect(summaries.map((b) => b?.changeTracking)).toEqual([
      { new: 5, same: 0, changed: 0, removed: 0 },
      { new: 1, same: 2, changed: 2, removed: 1 },
      { new: 0, same: 5, changed: 0, removed: 0 },
    ]);
    expect(receiver.received.every((r) => r.validSignature)).toBe(true);
    const pages = receiver.received.filter((r) => r.id === crawlIds[1] && r.type === "crawl.page").map((r) => r.body.data[0]);
    expect(Object.fromEntries(pages.map((d) => [new URL(d.metadata.sourceURL).pathname, d.changeTracking.changeStatus]))).toEqual({
      "/": "changed", "/price": "changed", "/etag": "same", "/static": "same", "/new": "new",
    });
    expect(pages.find((d) => d.metadata.sourceURL.endsWith("/price")).changeTracking.diff.text).toContain("+12 EUR");

    // batch scrapes: their pages' records (no removed pages), batch_scrape.* webhooks with the same summary
    const [one, two] = await Promise.all(batchIds.map((id, i) => feedOf(id, [2, 0][i] as number)));
    expect(one?.map((r) => [new URL(r.url).pathname, r.changeStatus, r.kind]).sort()).toEqual([["/new", "new", "batch"], ["/price", "new", "batch"]]);
    expect(two).toEqual([]);
    const batchDone = await Promise.all(batchIds.map(completedHook));
    expect(batchDone.map((b) => [b?.type, b?.changeTracking])).toEqual([
      ["batch_scrape.completed", { new: 2, same: 0, changed: 0, removed: 0 }],
      ["batch_scrape.completed", { new: 0, same: 1, changed: 0, removed: 0 }],
    ]);
    const batchPages = receiver.received.filter((r) => r.id === batchIds[1] && r.type === "batch_scrape.page");
    expect(batchPages.map((r) => r.body.data[0].changeTracking.changeStatus)).toEqual(["same"]);
  });
});
