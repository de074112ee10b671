// Web archives survive kill -9 (embedded mode, `trawl all` as a child process): a crawl with `warc: true` is killed
// twice while pages are archived, restarted on the same DATA_DIR, and ends with every stored page in the archives
// exactly once by the index (a page archived again after the restart is listed once), every file whole to warcio
// (the tail a kill tore is cut at the restart) and every index line at its record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, postJson, waitForEnd } from "./harness.ts";
import { killHard, launchEmbedded } from "./embedded-process.ts";
import { freePort } from "./own-infra.ts";
import { checkArchives, setUpWarcio, tearDownWarcio } from "./warc-check.ts";

let site: FixtureSite;
const dataDir = mkdtempSync(join(tmpdir(), "trawl-warc-crash-"));
beforeAll(async () => {
  await setUpWarcio();
  site = await startFixtureSite({ padBytes: 300_000, delayMs: 40 });
}, 200_000);
afterAll(async () => {
  await site?.close();
  await tearDownWarcio();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("web archives, kill -9 while archiving", () => {
  it("every stored page is in the archives once by the index, every file whole", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const launch = () => launchEmbedded(dataDir, port, { FETCH_CONCURRENCY: "4" });
    let proc = await launch();
    const { body } = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000, warc: true });
    const id = body.id as string;
    const cuts: string[] = [];
    for (const atLeast of [8, 25]) {
      for (let i = 0; i < 600; i++) {
        const now = (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body;
        if (now.status !== "scraping" || now.completed >= atLeast) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      await killHard(proc.child);
      proc = await launch();
      if (proc.output().includes("torn tails cut")) cuts.push(`after ${atLeast}`);
    }
    try {
      expect((await waitForEnd(api, id, 120_000)).at(-1).status).toBe("completed");
      const docs = (await allChunks(api, id)).flatMap((c) => c.body.data as { metadata: { sourceURL: string; url?: string } }[]);
      const { cdxj } = await checkArchives(api, "/v2/crawl", id);
      const archived = new Set(cdxj.map(({ entry }) => entry.url));
      // every page the crawl stored was archived (its final URL: a redirect's target has a response of its own)
      for (const d of docs) expect(archived.has(d.metadata.url ?? d.metadata.sourceURL), d.metadata.sourceURL).toBe(true);
      expect(docs.length).toBeGreaterThan(50);
      console.log(`warc-crash: ${docs.length} pages, ${cdxj.length} index lines; restarts that cut a torn tail: ${cuts.join(", ") || "none"}`);
    } finally {
      await killHard(proc.child);
    }
  });
});
