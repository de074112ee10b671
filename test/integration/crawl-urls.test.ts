// Explaining a crawl, in both modes: every URL of a fixture site with robots rules, excluded paths, a depth limit,
// duplicates, broken links and a limit gets exactly its expected state and reason (GET /v2/crawl/:id/urls, paged), a
// URL no page links to is explained, another team's key gets 404, and the official SDK still reads the status. Then
// `trawl crawl` writes the same rows to urls.jsonl.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { crawlCommand } from "../../app/commands/crawl-command.ts";
import { startExplainSite, type ExplainSite } from "../fixtures/explain-site.ts";
import { MODES, startTrawl, type Instance } from "./harness.ts";

let site: ExplainSite;
beforeAll(async () => {
  site = await startExplainSite();
});
afterAll(async () => {
  await site?.close();
});

/** [path, state, reason, detail (a substring; "" for none), discovered from (path, "sitemap", or "" for none), depth] */
type Row = [string, string, string, string, string, number];

const MAIN: Row[] = [
  ["/docs/", "fetched", "fetched", "", "", 0],
  ["/docs/a", "fetched", "fetched", "", "/docs/", 1],
  ["/docs/a/", "skipped", "duplicate", "/docs/a", "/docs/", 1],
  ["/docs/index.html", "skipped", "duplicate", "/docs/", "/docs/", 1],
  ["/docs/b", "fetched", "fetched", "", "/docs/", 1],
  ["/docs/private/secret", "blocked", "robots_blocked", "Disallow: /docs/private", "/docs/", 1],
  ["/docs/archive/old", "skipped", "excluded", "^/docs/archive", "/docs/", 1],
  ["/docs/broken", "failed", "failed", "SCRAPE_HTTP_STATUS", "/docs/", 1],
  ["/about", "skipped", "out_of_scope", "outside-path", "/docs/", 1],
  ["/docs/logo.png", "skipped", "out_of_scope", "skipped-file-type", "/docs/", 1],
  ["http://example.invalid/x", "skipped", "out_of_scope", "external", "/docs/", 1],
  ["/docs/a/deep", "fetched", "fetched", "", "/docs/a", 2],
  ["/docs/a/deeper", "skipped", "too_deep", "beyond maxDiscoveryDepth 2", "/docs/a/deep", 3],
  ["/docs/old", "skipped", "duplicate", "/docs/b", "/docs/b", 2],
  ["/docs/from-sitemap", "fetched", "fetched", "", "sitemap", 0],
  ["/docs/archive/2019", "skipped", "excluded", "^/docs/archive", "sitemap", 0],
];

const LIMITED: Row[] = [
  ["/lim/", "fetched", "fetched", "", "", 0],
  ["/lim/1", "fetched", "fetched", "", "/lim/", 1],
  ["/lim/2", "skipped", "over_limit", "limit 2", "/lim/", 1],
  ["/lim/3", "skipped", "over_limit", "limit 2", "/lim/", 1],
];

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let keyA: string;
  let keyB: string;

  const call = async (path: string, key = keyA) => {
    const res = await fetch(path.startsWith("http") ? path : `${trawl.api}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const rel = (u: string | null) => (u === null ? "" : u.startsWith(site.origin) ? u.slice(site.origin.length) : u);

  async function crawl(body: Record<string, unknown>): Promise<string> {
    const res = await fetch(`${trawl.api}/v2/crawl`, { method: "POST", headers: { authorization: `Bearer ${keyA}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const { id } = (await res.json()) as { id: string };
    for (let i = 0; i < 300; i++) {
      const { body: s } = await call(`/v2/crawl/${id}?limit=1`);
      if (s.status !== "scraping") return id;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("crawl did not end");
  }

  /** Every page of /urls, following next. */
  async function allUrls(id: string, query = "") {
    const data: any[] = [];
    let url: string | undefined = `/v2/crawl/${id}/urls${query}`;
    let first: any;
    while (url) {
      const { status, body } = await call(url);
      expect(status, JSON.stringify(body)).toBe(200);
      first ??= body;
      data.push(...body.data);
      url = body.next;
    }
    return { first, data };
  }

  const asRows = (data: any[]): Row[] => data.map((e) => [rel(e.url), e.state, e.reason, e.detail ?? "", rel(e.discoveredFrom), e.depth]);
  const expectRows = (got: Row[], want: Row[]) => {
    const sorted = (rows: Row[]) => [...rows].sort((a, b) => a[0].localeCompare(b[0]));
    const g = sorted(got);
    expect(g.map((r) => r[0])).toEqual(sorted(want).map((r) => r[0]));
    sorted(want).forEach((w, i) => {
      const r = g[i] as Row;
      expect([r[1], r[2], r[4], r[5]], w[0]).toEqual([w[1], w[2], w[4], w[5]]);
      expect(r[3], w[0]).toContain(w[3]);
    });
  };

  beforeAll(async () => {
    trawl = await startTrawl({ mode, useDbAuthentication: true });
    const key = async (team: string) => (await (await fetch(`${trawl.api}/admin/CHANGEME/keys`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ team }) })).json() as { key: string }).key;
    keyA = await key(`a-${mode}`);
    keyB = await key(`b-${mode}`);
  });
  afterAll(async () => {
    await trawl?.stop();
  });

  it("gives every URL its exact state and reason, explains a URL no page links to, and hides the crawl from another team", async () => {
    const [main, limited] = await Promise.all([
      crawl({ url: `${site.origin}/docs/`, maxDiscoveryDepth: 2, excludePaths: ["^/docs/archive"], limit: 50 }),
      crawl({ url: `${site.origin}/lim/`, limit: 2, sitemap: "skip" }),
    ]);
    // paged by 5, as the status is (skip / next)
    const { first, data } = await allUrls(main, "?limit=5");
    expectRows(asRows(data), MAIN);
    expect(first).toMatchObject({ success: true, status: "completed", total: MAIN.length, unlisted: 0 });
    expect(first.counts).toEqual({ fetched: 5, duplicate: 3, robots_blocked: 1, excluded: 2, failed: 1, out_of_scope: 3, too_deep: 1 });
    expect(data.find((e: { url: string }) => e.url.endsWith("/docs/broken")).attempts).toBeGreaterThanOrEqual(1);
    expectRows(asRows((await allUrls(limited)).data), LIMITED);
    // filters
    expect(asRows((await allUrls(main, "?reason=excluded")).data).map((r) => r[0]).sort()).toEqual(["/docs/archive/2019", "/docs/archive/old"]);
    expect((await allUrls(main, "?status=fetched")).data).toHaveLength(5);
    expect((await call(`/v2/crawl/${main}/urls?reason=bogus`)).status).toBe(400);

    const explain = async (url: string, key = keyA) => call(`/v2/crawl/${main}/urls/explain?url=${encodeURIComponent(url)}`, key);
    const orphan = await explain(`${site.origin}/docs/orphan`);
    expect(orphan).toMatchObject({ status: 200, body: { success: true, seen: false, entry: null } });
    expect(orphan.body.explanation).toMatch(/^Never seen: no page the crawl fetched links to it and the sitemap does not list it\.$/);
    const archived = await explain(`${site.origin}/docs/archive/2019`);
    expect(archived.body).toMatchObject({ seen: true, entry: { reason: "excluded", discoveredFrom: "sitemap" } });
    expect(archived.body.explanation).toBe('Excluded by the excludePaths pattern "^/docs/archive"; found in the sitemap.');
    expect((await explain(`${site.origin}/docs/a/deeper`)).body.explanation).toBe(`Beyond maxDiscoveryDepth (depth 3 is beyond maxDiscoveryDepth 2); linked from ${site.origin}/docs/a/deep (depth 3).`);
    expect((await call(`/v2/crawl/${main}/urls/explain`)).status).toBe(400);

    // another team: 404 as for the status
    for (const path of [`/v2/crawl/${main}`, `/v2/crawl/${main}/urls`, `/v2/crawl/${main}/urls/explain?url=${encodeURIComponent(site.origin + "/docs/")}`]) {
      expect(await call(path, keyB), path).toMatchObject({ status: 404, body: { success: false, error: "Job not found" } });
    }

    // the official SDK reads the status as before
    const status = await new Firecrawl({ apiKey: keyA, apiUrl: trawl.api }).getCrawlStatus(main);
    expect(status).toMatchObject({ status: "completed", completed: 5, total: 5 });
    expect(status.data).toHaveLength(5);
  });
});

describe("trawl crawl", () => {
  it("writes every URL with its state and reason to urls.jsonl beside index.jsonl", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "trawl-urls-"));
    try {
      const code = await crawlCommand([`${site.origin}/docs/`, "--out", tmp], { ALLOW_PRIVATE_CRAWL_TARGETS: "true", LOG_LEVEL: "error", MAX_CPU: "1", MAX_RAM: "1", FETCH_RETRIES: "0" });
      expect(code).toBe(0);
      const rows = readFileSync(join(tmp, "urls.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const reason = Object.fromEntries(rows.map((r) => [r.url.replace(site.origin, ""), r.reason]));
      expect(reason).toMatchObject({
        "/docs/": "fetched", "/docs/a/": "duplicate", "/docs/private/secret": "robots_blocked", "/docs/broken": "failed",
        "/about": "out_of_scope", "/docs/archive/2019": "failed", "/docs/a/deeper": "failed", "/docs/old": "duplicate",
      });
      expect(rows.filter((r) => r.state === "fetched")).toHaveLength(readFileSync(join(tmp, "index.jsonl"), "utf8").trim().split("\n").length);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
