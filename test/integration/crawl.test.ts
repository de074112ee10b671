// A crawl end to end through the public HTTP API of a local fixture site, in both modes: cluster (real Kafka in
// KRaft mode and real ClickHouse) and embedded (in-process bus, on-disk store).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const CHUNK_BYTES = 48 * 1024;

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;

  beforeAll(async () => {
    [trawl, site] = await Promise.all([startTrawl({ mode, statusChunkMaxBytes: CHUNK_BYTES }), startFixtureSite({ delayMs: 5 })]);
  });

  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  const pathsOf = (docs: any[]) => docs.map((d) => new URL(d.metadata.sourceURL).pathname).sort();

  describe("POST /v2/crawl → GET /v2/crawl/:id", () => {
    let id: string;
    let statuses: any[];

    beforeAll(async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, {
        url: `${site.origin}/docs/`,
        limit: 1000,
        scrapeOptions: { formats: ["markdown", "html"] },
        origin: "test",
        crawlEntireDomain: false,
        allowSubdomains: false,
        integration: null,
      });
      expect(res.status).toBe(200);
      id = res.body.id;
      // queryable at once, before any stage ran
      const first = await getJson(`${trawl.api}/v2/crawl/${id}`);
      expect(first.status).toBe(200);
      expect(first.body.status).toBe("scraping");
      statuses = [first.body, ...(await waitForEnd(trawl.api, id))];
    });

    it("answers with the id and a status URL built from the request's host", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1 });
      expect(res.body).toEqual({ success: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/), url: `${trawl.api}/v2/crawl/${res.body.id}` });
      await waitForEnd(trawl.api, res.body.id);
    });

    it("moves from scraping to completed, never reporting more completed than it can return", async () => {
      const last = statuses.at(-1);
      expect(statuses[0].status).toBe("scraping");
      expect(last.status).toBe("completed");
      for (const s of statuses) expect(s.completed).toBeLessThanOrEqual(s.total);
      expect(last.completed).toBe(expectedDocPaths().length);
      expect(last.total).toBe(expectedDocPaths().length);
      expect(last.creditsUsed).toBe(expectedDocPaths().length);
      expect(Date.parse(last.expiresAt)).toBeGreaterThan(Date.now() + 23 * 3600 * 1000);
    });

    it("returns exactly the pages under the start path, each once", async () => {
      const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
      expect(pathsOf(docs)).toEqual(expectedDocPaths().sort());
      // outside the start path, external, fragments, duplicates: never fetched
      expect(site.hits.get("/other/outside.html") ?? 0).toBe(0);
      expect(site.hits.get("/docs/index.html") ?? 0).toBe(0);
      expect(site.hits.get("/logo.png") ?? 0).toBe(0);
      const crawlHits = [...site.hits].filter(([p]) => p.startsWith("/docs/section-"));
      for (const [path, n] of crawlHits) expect(n, path).toBe(1);
      for (const d of docs) expect(d.metadata.sourceURL).not.toContain("#");
    });

    it("fills the document: markdown of the main content, html, metadata", async () => {
      const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data);
      const page = docs.find((d) => d.metadata.sourceURL.endsWith("/docs/section-2/page-3.html"));
      expect(page.markdown).toContain("# Section 2 page 3");
      expect(page.markdown).toContain("Content of page 3 in section 2.");
      expect(page.markdown).toContain("```");
      expect(page.markdown).not.toContain("Copyright fixture"); // footer removed (onlyMainContent)
      expect(page.markdown).not.toContain("window.tracking");
      expect(page.html).toContain("<h1>Section 2 page 3</h1>");
      expect(page.metadata).toMatchObject({
        title: "Section 2 page 3",
        description: "About Section 2 page 3",
        language: "en",
        statusCode: 200,
        ogLocaleAlternate: ["fr_FR", "de_DE"],
        url: `${site.origin}/docs/section-2/page-3.html`,
      });
      expect(page.metadata.scrapeId).toMatch(/^[0-9a-f-]{36}$/);
      const redirected = docs.find((d) => d.metadata.sourceURL.endsWith("/docs/redirect-me"));
      expect(redirected.metadata.url).toBe(`${site.origin}/docs/target.html`);
      expect(redirected.markdown).toContain("You were redirected.");
    });

    it("pages through several chunks capped in bytes, with next only while more documents exist", async () => {
      const chunks = await allChunks(trawl.api, id);
      expect(chunks.length).toBeGreaterThanOrEqual(2);
      for (const c of chunks) expect(JSON.stringify(c.body.data).length).toBeLessThanOrEqual(CHUNK_BYTES);
      for (const c of chunks.slice(0, -1)) expect(c.body.next).toMatch(new RegExp(`^${trawl.api}/v2/crawl/${id}\\?skip=\\d+$`));
      expect(chunks.at(-1)?.body.next).toBeUndefined();
      const ids = chunks.flatMap((c) => c.body.data.map((d: any) => d.metadata.scrapeId));
      expect(new Set(ids).size).toBe(expectedDocPaths().length);
      // a page past the end: empty, no next
      const past = await getJson(`${trawl.api}/v2/crawl/${id}?skip=100000`);
      expect(past.body.data).toEqual([]);
      expect(past.body.next).toBeUndefined();
    });

    it("honours limit as a page size and carries it in next", async () => {
      const chunks = await allChunks(trawl.api, id, "?limit=25");
      expect(chunks.map((c) => c.body.data.length)).toEqual([25, 25, 19]);
      expect(chunks[0]?.body.next).toBe(`${trawl.api}/v2/crawl/${id}?skip=25&limit=25`);
    });

    it("lists the failed page in the errors endpoint", async () => {
      const { body } = await getJson(`${trawl.api}/v2/crawl/${id}/errors`);
      expect(body.robotsBlocked).toEqual([]);
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]).toMatchObject({ url: `${site.origin}/docs/missing`, code: "SCRAPE_HTTP_STATUS", error: "HTTP 404" });
    });
  });

  describe("limit", () => {
    it("counts URLs crawled", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 5 });
      const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
      expect(last).toMatchObject({ status: "completed", completed: 5, total: 5 });
      const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data);
      expect(docs).toHaveLength(5);
    });
  });

  describe("DELETE /v2/crawl/:id", () => {
    it("cancels at once and stores nothing afterwards", async () => {
      const slow = await startFixtureSite({ delayMs: 400 });
      try {
        const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${slow.origin}/docs/`, limit: 1000 });
        const id = res.body.id;
        // let a few pages through
        for (let i = 0; i < 100; i++) {
          const { body } = await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`);
          if (body.completed >= 2) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        const del = await fetch(`${trawl.api}/v2/crawl/${id}`, { method: "DELETE" });
        expect(del.status).toBe(200);
        expect(await del.json()).toEqual({ status: "cancelled" });
        const right = await getJson(`${trawl.api}/v2/crawl/${id}`);
        expect(right.body.status).toBe("cancelled");
        // the very page polled a moment ago (shared for STATUS_CACHE_MS) is not served from before the cancel
        const polled = await getJson(`${trawl.api}/v2/crawl/${id}?limit=1`);
        expect(polled.body.status).toBe("cancelled");
        const countAt = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data).length;
        await new Promise((r) => setTimeout(r, 2500)); // in-flight fetches finish meanwhile
        const chunks = await allChunks(trawl.api, id);
        expect(chunks.flatMap((c) => c.body.data)).toHaveLength(countAt);
        expect(chunks.at(-1)?.body.status).toBe("cancelled");
        expect(chunks.at(-1)?.body.next).toBeUndefined();
        // cancelling again is harmless
        expect((await fetch(`${trawl.api}/v2/crawl/${id}`, { method: "DELETE" })).status).toBe(200);
      } finally {
        await slow.close();
      }
    });

    it("refuses to cancel a finished crawl and 404s an unknown one", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1 });
      await waitForEnd(trawl.api, res.body.id);
      const done = await fetch(`${trawl.api}/v2/crawl/${res.body.id}`, { method: "DELETE" });
      expect(done.status).toBe(409);
      expect(await done.json()).toEqual({ error: "Crawl is already completed" });
      const unknown = await fetch(`${trawl.api}/v2/crawl/00000000-0000-4000-8000-000000000000`, { method: "DELETE" });
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toEqual({ error: "Job not found" });
    });
  });

  describe("a crawl whose start page fails", () => {
    it("ends failed with the reason, never stuck in scraping", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/missing`, limit: 10 });
      const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
      expect(last).toMatchObject({ success: false, status: "failed", completed: 0, data: [] });
      expect(last.error).toContain("SCRAPE_HTTP_STATUS");
    });
  });

  describe("bad input", () => {
    const cases: [string, unknown, RegExp | string][] = [
      ["missing url", { limit: 3 }, "Bad Request"],
      ["unknown key", { url: "https://example.com", maxDepth: 3 }, "Bad Request"],
      ["wrong type", { url: "https://example.com", limit: "ten" }, "Bad Request"],
      ["bad enum", { url: "https://example.com", scrapeOptions: { formats: ["pdf-please"] } }, "Bad Request"],
      ["bad nested key", { url: "https://example.com", scrapeOptions: { formatz: [] } }, "Bad Request"],
      ["bad webhook", { url: "https://example.com", webhook: { url: "not a url" } }, "Bad Request"],
      ["unsupported protocol", { url: "ftp://example.com/x" }, "URL uses unsupported protocol"],
      ["no TLD", { url: "https://intranet/x" }, "URL must have a valid top-level domain or be a valid path"],
      ["invalid json schema", { url: "https://example.com", scrapeOptions: { formats: [{ type: "json", schema: { type: "objekt" } }] } }, /invalid JSON Schema/],
      ["waitFor > timeout/2", { url: "https://example.com", scrapeOptions: { waitFor: 8000, timeout: 15000 } }, /waitFor must not exceed half of timeout/],
      ["not an object", [1, 2], "Bad Request"],
    ];
    for (const [name, body, error] of cases) {
      it(`400 for ${name}`, async () => {
        const res = await postJson(`${trawl.api}/v2/crawl`, body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST" });
        expect(res.body.error).toMatch(error);
        expect(Array.isArray(res.body.details)).toBe(true);
      });
    }

    it("400 for unknown keys names them", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: "https://example.com", maxDepth: 3, ignoreSitemap: true });
      expect(res.body.details[0]).toMatchObject({ code: "unrecognized_keys", keys: ["maxDepth", "ignoreSitemap"] });
    });

    it("400 for malformed JSON", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, "{not json");
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ success: false, code: "BAD_REQUEST_INVALID_JSON", error: "Bad request, malformed JSON" });
    });

    it("404 for an unknown id, 400 for a malformed one, 400 for bad paging", async () => {
      const unknown = await getJson(`${trawl.api}/v2/crawl/00000000-0000-4000-8000-000000000000`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ success: false, error: "Job not found" });
      const malformed = await getJson(`${trawl.api}/v2/crawl/not-a-uuid`);
      expect(malformed.status).toBe(400);
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1 });
      for (const q of ["?skip=-1", "?skip=1.5", "?limit=0", "?limit=1001", "?skip=1&skip=2"]) {
        const bad = await getJson(`${trawl.api}/v2/crawl/${res.body.id}${q}`);
        expect(bad.status, q).toBe(400);
        expect(bad.body.error, q).toMatch(/^Invalid pagination/);
      }
      await waitForEnd(trawl.api, res.body.id);
    });
  });

  describe("health", () => {
    it("answers /health and /ready", async () => {
      expect(await getJson(`${trawl.api}/health`)).toMatchObject({ status: 200, body: { status: "ok" } });
      expect(await getJson(`${trawl.api}/ready`)).toMatchObject({ status: 200, body: { status: "ready" } });
      expect((await getJson(`${trawl.api}/v2/nothing-here`)).status).toBe(404);
    });
  });

  describe("queue admin UI", () => {
    it("shows every stage's queue behind its key, and nothing without it", async () => {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/about`, limit: 1 });
      await waitForEnd(trawl.api, res.body.id);
      const page = await fetch(`${trawl.api}/admin/CHANGEME/queues`);
      expect(page.status).toBe(200);
      const html = await page.text();
      for (const t of ["frontier.inbox", "fetch.tasks", "pages.fetched", "crawl.pages"]) expect(html).toContain(t);
      const json = await getJson(`${trawl.api}/admin/CHANGEME/queues.json`);
      expect(json.body.queues.find((q: any) => q.topic === "frontier.inbox" && q.group === "frontier").produced).toBeGreaterThan(0);
      // dead letters by code (this process's; none in this crawl)
      expect(html).toContain("Dead letters");
      expect(json.body.deadLetters).toEqual(expect.any(Array));
      expect((await fetch(`${trawl.api}/admin/wrong-key/queues`)).status).toBe(404);
    });
  });

  describe("official Firecrawl JS SDK", () => {
    it("crawl() waits and follows next, unmodified", async () => {
      const firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
      const job = await firecrawl.crawl(`${site.origin}/docs/`, { limit: 1000, pollInterval: 1, scrapeOptions: { formats: ["markdown"] } });
      expect(job.status).toBe("completed");
      expect(job.completed).toBe(expectedDocPaths().length);
      expect(pathsOf(job.data)).toEqual(expectedDocPaths().sort());
      for (const d of job.data) expect(typeof d.markdown).toBe("string");

      const started = await firecrawl.startCrawl(`${site.origin}/docs/`, { limit: 3 });
      expect(started.id).toMatch(/^[0-9a-f-]{36}$/);
      await waitForEnd(trawl.api, started.id);
      const status = await firecrawl.getCrawlStatus(started.id);
      expect(status).toMatchObject({ status: "completed", completed: 3, total: 3 });
      expect(status.data).toHaveLength(3);
    });
  });
});
