// `data` never runs ahead of `completed`, in both modes: the sink stores a page before the frontier counts it, so
// the store can hold more documents than the crawl record counts. This puts the store in exactly that state
// (3 documents stored, 1 counted) and reads the status through the API.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { getJson, MODES, startTrawl, type Instance } from "./harness.ts";

/** The first `n` frames of a watch. */
async function frames(url: string, n: number): Promise<any[]> {
  const ws = new WebSocket(url);
  const got: any[] = [];
  return new Promise((resolve, reject) => {
    ws.on("message", (data) => {
      got.push(JSON.parse(String(data)));
      if (got.length === n) {
        ws.close();
        resolve(got);
      }
    });
    ws.on("error", reject);
    setTimeout(() => reject(new Error(`only ${got.length} frames`)), 10_000);
  });
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  beforeAll(async () => {
    // this test rewrites the store behind the API's back: every read must see it at once (no shared answers)
    trawl = await startTrawl({ mode, statusCacheMs: 0 });
  });
  afterAll(async () => trawl?.stop());

  it("serves at most `completed` documents, in every chunk, while the counter lags the store", async () => {
    const { store, clock } = trawl.running;
    const crawlId = randomUUID();
    const now = clock.now();
    const record = {
      crawlId, version: 1, teamId: "bypass", url: "https://example.com/", options: { limit: 10, crawlEntireDomain: false, allowSubdomains: false, formats: ["markdown"], onlyMainContent: true },
      webhook: "", status: "scraping", total: 3, completed: 1, failed: 0, creditsUsed: 1, tokensUsed: 0, discoveryDone: true,
      createdAt: now, updatedAt: now, completedAt: 0, expiresAt: now + 86_400_000, error: "",
    } as const;
    await store.saveCrawls([record as never]);
    await store.insertDocuments([0, 1, 2].map((seq) => ({
      crawlId, seq, urlKey: `k${seq}`, finalKey: `k${seq}`, scrapeId: randomUUID(), url: `https://example.com/${seq}`, statusCode: 200, credits: 1, storedAt: now,
      doc: JSON.stringify({ markdown: `page ${seq}`, metadata: { sourceURL: `https://example.com/${seq}`, statusCode: 200 } }),
    })));
    for (const query of ["", "?limit=1", "?skip=1", "?skip=0&limit=5"]) {
      const { body } = await getJson(`${trawl.api}/v2/crawl/${crawlId}${query}`);
      expect(body.completed, query).toBe(1);
      const skip = Number(new URLSearchParams(query.slice(1)).get("skip") ?? 0);
      expect(skip + body.data.length, query).toBeLessThanOrEqual(body.completed);
      expect(body.next, query).toBeUndefined();
    }
    const first = await getJson(`${trawl.api}/v2/crawl/${crawlId}`);
    expect(first.body.data.map((d: any) => d.markdown)).toEqual(["page 0"]);
    // the WebSocket catchup too; the two stored documents not yet counted follow as document frames
    const watched = await frames(`${trawl.api.replace("http", "ws")}/v2/crawl/${crawlId}`, 3);
    expect(watched[0].type).toBe("catchup");
    expect(watched[0].data.completed).toBe(1);
    expect(watched[0].data.data.map((d: any) => d.markdown)).toEqual(["page 0"]);
    expect(watched.slice(1).map((f) => [f.type, f.data.markdown])).toEqual([["document", "page 1"], ["document", "page 2"]]);
    // cancelled with the counter behind: every stored page is served at once, and completed shows at least as many
    await store.saveCrawls([{ ...record, version: 2, status: "cancelled", completedAt: now, updatedAt: now + 1 } as never]);
    const cancelled = await getJson(`${trawl.api}/v2/crawl/${crawlId}`);
    expect(cancelled.body.data).toHaveLength(3);
    expect(cancelled.body.completed).toBe(3);
    const tail = await getJson(`${trawl.api}/v2/crawl/${crawlId}?skip=2`);
    expect([tail.body.data.length, tail.body.completed]).toEqual([1, 3]);
    // once the counter catches up, every document is served
    await store.saveCrawls([{ ...record, version: 3, completed: 3, creditsUsed: 3, updatedAt: now + 2 } as never]);
    const all = await getJson(`${trawl.api}/v2/crawl/${crawlId}`);
    expect(all.body.data.map((d: any) => d.markdown)).toEqual(["page 0", "page 1", "page 2"]);
    const paged = await getJson(`${trawl.api}/v2/crawl/${crawlId}?limit=2`);
    expect(paged.body.data).toHaveLength(2);
    expect(paged.body.next).toContain("skip=2");
  });
});
