// Credits cannot be overdrawn (issue 50, finding 6), authentication on, in both modes: a PDF is parsed up to the
// pages the team's credits pay for (uploads, scrapes, crawls), concurrent jobs cannot spend the same credits, a
// failed job gives its reservation back, a batch holds a budget of up to CREDIT_BUDGET_PER_PAGE a URL (not every credit
// left), and URLs appended to it are billed within a budget raised by their own credits.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../fixtures/pdf.ts";
import { MODES, startTrawl, type Instance } from "./harness.ts";

const THREE_PAGES = makePdf(["Page one", "Page two", "Page three"]);
const TEN_PAGES = makePdf(Array.from({ length: 10 }, (_, i) => `Page ${i + 1}`));

/** Answers of /hold pages kept until release() (a batch or crawl of them runs until then). */
const holds = { on: false, waiting: [] as (() => void)[] };
function hold(): void {
  holds.on = true;
}
function release(): void {
  holds.on = false;
  for (const answer of holds.waiting.splice(0)) answer();
}
let unique = 0;
/** A URL of `path` no cache has seen. */
const fresh = (origin: string, path: string) => `${origin}${path}${path.includes("?") ? "&" : "?"}u=${Date.now()}-${unique++}`;

/** A site: an HTML page, a three-page PDF, a ten-page one (/ten.pdf), /docs/ linking two PDFs, and held pages (/hold). */
async function pdfSite(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (path === "/hold") {
      const answer = () => res.writeHead(200, { "content-type": "text/html" }).end("<html><body><h1>Held</h1><p>Answered at last.</p></body></html>");
      if (holds.on) holds.waiting.push(answer);
      else answer();
    } else if (path === "/ten.pdf") res.writeHead(200, { "content-type": "application/pdf" }).end(TEN_PAGES);
    else if (req.url === "/docs/") res.writeHead(200, { "content-type": "text/html" }).end('<html><body><h1>Docs</h1><a href="a.pdf">a</a> <a href="b.pdf">b</a></body></html>');
    else if (req.url?.endsWith(".pdf")) res.writeHead(200, { "content-type": "application/pdf" }).end(THREE_PAGES);
    else if (path === "/page.html") res.writeHead(200, { "content-type": "text/html" }).end("<html><body><h1>A page</h1><p>Some text.</p></body></html>");
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each(MODES)("credits with authentication on (%s)", (mode) => {
  let trawl: Instance;
  let site: { origin: string; server: Server };
  let teams = 0;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([pdfSite(), startTrawl({ mode, useDbAuthentication: true })]);
  });
  afterAll(async () => {
    release();
    await trawl?.stop();
    await new Promise((r) => site?.server.close(r));
  });

  async function call(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${trawl.api}${path}`, {
      method, headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  }
  /** A key of a new team with `credits`. */
  async function team(credits: number): Promise<string> {
    const res = await fetch(`${trawl.api}/admin/CHANGEME/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ team: `credits-${mode}-${teams++}`, credits }) });
    return ((await res.json()) as { key: string }).key;
  }
  async function parse(key: string, bytes: Buffer): Promise<{ status: number; body: any }> {
    const form = new FormData();
    form.append("file", new Blob([bytes], { type: "application/pdf" }), "manual.pdf");
    const res = await fetch(`${trawl.api}/v2/parse`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: await res.json() };
  }
  const used = async (key: string): Promise<number> => (await call("GET", "/v2/team/credit-usage", key)).body.data.creditsUsed;
  async function crawlEnd(key: string, id: string, resource = "crawl"): Promise<any> {
    for (let i = 0; i < 600; i++) {
      const { body } = await call("GET", `/v2/${resource}/${id}`, key);
      if (body.status !== "scraping") return body;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`crawl ${id} did not end`);
  }

  it("parses a PDF upload and a scraped PDF up to the pages the last credit pays for, with a warning", async () => {
    const [uploader, scraper] = [await team(1), await team(1)];
    const uploaded = await parse(uploader, THREE_PAGES);
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
    expect(uploaded.body.data.markdown).toBe("Page one");
    expect(uploaded.body.data.metadata).toMatchObject({ numPages: 3, creditsUsed: 1 });
    expect(uploaded.body.data.warning).toMatch(/credits left pay for 1 page/);
    const scraped = await call("POST", "/v2/scrape", scraper, { url: `${site.origin}/manual.pdf` });
    expect(scraped.status, JSON.stringify(scraped.body)).toBe(200);
    expect(scraped.body.data.metadata).toMatchObject({ numPages: 3, creditsUsed: 1 });
    expect([await used(uploader), await used(scraper)]).toEqual([1, 1]);
    expect((await parse(uploader, THREE_PAGES)).status).toBe(402);
  });

  it("keeps crawls of PDFs within the credits the team had, two at once included", async () => {
    const key = await team(5);
    // HTML 1 + two PDFs of 3 pages: 7 credits each without a budget
    const started = await Promise.all([0, 1].map(() => call("POST", "/v2/crawl", key, { url: `${site.origin}/docs/`, limit: 10, sitemap: "skip" })));
    const ids = started.filter((s) => s.status === 200).map((s) => s.body.id as string);
    expect(ids.length).toBeGreaterThan(0);
    const ended = await Promise.all(ids.map((id) => crawlEnd(key, id)));
    const total = ended.reduce((n, c) => n + c.creditsUsed, 0);
    expect(total).toBeLessThanOrEqual(5);
    expect(total).toBeGreaterThan(0);
    expect(await used(key)).toBeLessThanOrEqual(5);
  });

  it("keeps monitor checks' crawls of PDFs within the credits the team had; a check that ended holds nothing", async () => {
    const key = await team(10);
    const target = { type: "crawl", url: `${site.origin}/docs/`, crawlOptions: { limit: 10, sitemap: "skip" } };
    const created = await call("POST", "/v2/monitor", key, { name: "pdfs", schedule: { cron: "0 0 1 1 *" }, targets: [target] });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const costs: number[] = [];
    for (let i = 0; i < 2; i++) {
      // HTML 1 + two PDFs of 3 pages: 7 without a budget; the second check has 3 left
      const run = await call("POST", `/v2/monitor/${created.body.data.id}/run`, key);
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      costs.push((await crawlEnd(key, run.body.id)).creditsUsed);
    }
    expect(costs).toEqual([7, 3]);
    expect(await used(key)).toBe(10);
  });

  it("lets 20 concurrent jobs spend no more than the balance together", async () => {
    const key = await team(5);
    expect(await used(key)).toBe(0); // the key verified (and cached): the 20 jobs are not spaced by its hashing
    const jobs = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      call("POST", "/v2/scrape", key, { url: `${site.origin}/${i % 2 === 0 ? "page.html" : `manual-${i}.pdf`}` })));
    const statuses = jobs.map((j) => j.status);
    expect(statuses.every((s) => s === 200 || s === 402), JSON.stringify(statuses)).toBe(true);
    const billed = jobs.filter((j) => j.status === 200).reduce((n, j) => n + j.body.data.metadata.creditsUsed, 0);
    expect(await used(key)).toBe(billed);
    expect(billed).toBeLessThanOrEqual(5);
    expect(statuses).toContain(200);
    expect(statuses).toContain(402);
  });

  it("lets concurrent maps spend no more than the balance", async () => {
    const key = await team(2);
    expect(await used(key)).toBe(0);
    const maps = await Promise.all(Array.from({ length: 8 }, () => call("POST", "/v2/map", key, { url: `${site.origin}/docs/`, sitemap: "skip" })));
    expect(maps.every((m) => m.status === 200 || m.status === 402), JSON.stringify(maps.map((m) => m.status))).toBe(true);
    expect(await used(key)).toBe(maps.filter((m) => m.status === 200).length);
    expect(await used(key)).toBeLessThanOrEqual(2);
  });

  it("gives a failed job's credits back: after failed scrapes and uploads the whole balance is still there", async () => {
    const key = await team(2);
    // one after the other: 2 credits let 2 jobs run at once, each holding 1 while it runs
    const failed = [];
    for (let i = 0; i < 3; i++) {
      failed.push(await call("POST", "/v2/scrape", key, { url: "http://127.0.0.1:1/", timeout: 5000 }));
      failed.push(await parse(key, Buffer.from("%PDF-1.4\nnot a pdf at all\n%%EOF\n")));
    }
    for (const f of failed) expect(f.status, JSON.stringify(f.body)).toBeGreaterThanOrEqual(400);
    expect(failed.map((f) => f.status)).not.toContain(402);
    expect(await used(key)).toBe(0);
    // a batch needs one credit per URL: both are still there only when no failed job kept its reservation
    const batch = await call("POST", "/v2/batch/scrape", key, { urls: [`${site.origin}/page.html`, `${site.origin}/docs/`] });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    const done = await crawlEnd(key, batch.body.id, "batch/scrape");
    expect(done).toMatchObject({ status: "completed", creditsUsed: 2 });
  });

  it("budgets a batch at 10 credits a URL: a 2-URL batch on 1,000 credits leaves 980 to the team's other jobs", async () => {
    const key = await team(1000);
    hold();
    try {
      const batch = await call("POST", "/v2/batch/scrape", key, { urls: [fresh(site.origin, "/hold"), fresh(site.origin, "/hold")] });
      expect(batch.status, JSON.stringify(batch.body)).toBe(200);
      // while it runs: 980 left, not 981 (a batch needs 1 credit a URL; refused, nothing runs), nor none
      const over = await call("POST", "/v2/batch/scrape", key, { urls: Array.from({ length: 981 }, (_, i) => `${site.origin}/p${i}.html`) });
      expect(over.status, JSON.stringify(over.body)).toBe(402);
      const scrape = await call("POST", "/v2/scrape", key, { url: fresh(site.origin, "/page.html") });
      expect(scrape.status, JSON.stringify(scrape.body)).toBe(200);
      // 979 left: a crawl with limit 97 holds 970 of them, and a scrape still has some
      const crawl = await call("POST", "/v2/crawl", key, { url: fresh(site.origin, "/hold"), limit: 97, sitemap: "skip" });
      expect(crawl.status, JSON.stringify(crawl.body)).toBe(200);
      expect((await call("POST", "/v2/scrape", key, { url: fresh(site.origin, "/page.html") })).status).toBe(200);
      release();
      expect(await crawlEnd(key, batch.body.id, "batch/scrape")).toMatchObject({ status: "completed", completed: 2, creditsUsed: 2 });
      expect(await crawlEnd(key, crawl.body.id)).toMatchObject({ status: "completed", creditsUsed: 1 });
      expect(await used(key)).toBe(5);
    } finally {
      release();
    }
  });

  it("bills URLs appended to a running batch within its budget raised by their credits, never above the balance", async () => {
    // 1,000 credits: the batch's 20 raised by 30 for 3 URLs; 25: raised by the 5 left, and billed no more
    for (const [credits, billed] of [[1000, 2 + 3 * 10], [25, 25]] as const) {
      const key = await team(credits);
      hold();
      try {
        const batch = await call("POST", "/v2/batch/scrape", key, { urls: [fresh(site.origin, "/hold"), fresh(site.origin, "/hold")] });
        expect(batch.status, JSON.stringify(batch.body)).toBe(200);
        const id = batch.body.id as string;
        const pdfs = [0, 1, 2].map(() => fresh(site.origin, "/ten.pdf"));
        const append = await call("POST", "/v2/batch/scrape", key, { urls: pdfs, appendToId: id });
        expect(append.status, JSON.stringify(append.body)).toBe(200);
        expect(append.body.id).toBe(id);
        // the held pages answer once the appended URLs are in the batch (else it could end without them)
        for (let i = 0; i < 600 && (await call("GET", `/v2/batch/scrape/${id}`, key)).body.total < 5; i++) await new Promise((r) => setTimeout(r, 100));
        release();
        // 2 held pages (1 each) and 3 PDFs of 10 pages (1 a page): 32, over the batch's first budget of 20
        expect(await crawlEnd(key, id, "batch/scrape")).toMatchObject({ status: "completed", completed: 5, creditsUsed: billed });
        expect(await used(key)).toBe(billed);
        expect(billed).toBeLessThanOrEqual(credits);
      } finally {
        release();
      }
    }
  });
});
