// Embedded mode survives kill -9 in the middle of large writes: a crawl of ~1 MB pages (one section of the fixture
// site: 11 pages, to stay well under a minute on a loaded machine) is killed three times while the sink writes,
// restarted each time on the same DATA_DIR, and must end with exactly the expected page set, each page once, and
// every document its status counts served (the invariant: data never exceeds what GET returns).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PAGES_PER_SECTION, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, postJson, waitForEnd } from "./harness.ts";
import { launchEmbedded, killHard } from "./embedded-process.ts";
import { freePort } from "./own-infra.ts";


let site: FixtureSite;
const dataDir = mkdtempSync(join(tmpdir(), "trawl-crash-"));
beforeAll(async () => {
  site = await startFixtureSite({ padBytes: 1_000_000, delayMs: 5 });
});
afterAll(async () => {
  await site.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const EXPECTED = ["/docs/section-1/", ...Array.from({ length: PAGES_PER_SECTION }, (_, i) => `/docs/section-1/page-${i + 1}.html`)];
const expectedDocPaths = () => EXPECTED;

const launch = (port: number) => launchEmbedded(dataDir, port, { FETCH_CONCURRENCY: "4", FETCH_MAX_BYTES: "15000000" });

describe("embedded mode, kill -9 during large writes", () => {
  it("ends with the exact page set, each page once, every counted document served", async () => {
    const port = await freePort();
    const api = `http://127.0.0.1:${port}`;
    let proc = await launch(port);
    const { body } = await postJson(`${api}/v2/crawl`, { url: `${site.origin}/docs/section-1/`, limit: 1000 });
    const id = body.id as string;
    const repairs: string[] = [];
    for (let kill = 1; kill <= 3; kill++) {
      // let some documents be written, then kill in the middle of the stream of 1 MB writes
      const before = (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body.completed as number;
      for (let i = 0; i < 100; i++) {
        const now = (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body;
        if (now.status !== "scraping" || now.completed >= before + 2) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await killHard(proc.child);
      proc = await launch(port);
      if (proc.output().includes("torn")) repairs.push(`restart ${kill}`);
      // right after the restart: every document the status counts is served (read in that order: a document is
      // stored before it is counted)
      const counted = (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body.completed as number;
      const served = (await allChunks(api, id)).flatMap((c) => c.body.data).length;
      expect(served).toBeGreaterThanOrEqual(counted);
    }
    try {
      const statuses = await waitForEnd(api, id, 45_000);
      const last = statuses.at(-1);
      expect(last.status).toBe("completed");
      const docs = (await allChunks(api, id)).flatMap((c) => c.body.data);
      const paths = docs.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname);
      expect(new Set(paths).size).toBe(paths.length);
      expect(paths.sort()).toEqual(expectedDocPaths().sort());
      expect(last.completed).toBe(docs.length);
      expect(last.creditsUsed).toBe(docs.length);
      // a record written after a repaired crash must survive the next restart too (it once was glued onto the torn one)
      await killHard(proc.child);
      proc = await launch(port);
      const again = (await allChunks(api, id)).flatMap((c) => c.body.data);
      expect(again.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
      expect((await getJson(`${api}/v2/crawl/${id}?limit=1`)).body).toMatchObject({ status: "completed", completed: again.length });
      console.log(`kill -9 x3 during 1 MB writes: ${docs.length} documents, repairs of a torn write at ${repairs.join(", ") || "no restart"}`);
    } finally {
      await killHard(proc.child);
    }
  });
});
