// The browser crash path, both modes: Chromium is killed (SIGKILL, the whole process) twice during a RENDER=always
// crawl; the renderer starts a new browser and tries the page in flight once more, so the crawl completes with every
// page rendered and stored exactly once.
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const LIMIT = 16;

/** The Chromium processes this test process started (the browser's main process is our child). */
function chromiumChildren(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,comm=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out.split("\n").map((l) => l.trim().split(/\s+/)).filter(([, comm]) => /chrom/i.test(comm ?? "")).map(([pid]) => Number(pid));
}

async function stored(api: string, id: string): Promise<number> {
  return (await getJson(`${api}/v2/crawl/${id}?limit=1`)).body.completed ?? 0;
}

describe.each(MODES)("Chromium killed during a crawl (%s mode)", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startFixtureSite(), startTrawl({ mode, render: "always", renderConcurrency: 2 })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("every page is rendered and stored exactly once", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: LIMIT });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    const killed: number[] = [];
    for (const after of [2, 8]) {
      await expect.poll(() => stored(trawl.api, id), { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(after);
      const pids = chromiumChildren();
      expect(pids.length, "a browser is running").toBeGreaterThan(0);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      killed.push(...pids);
    }
    const seen = await waitForEnd(trawl.api, id, 120_000);
    expect(seen.at(-1).status).toBe("completed");
    const docs = (await allChunks(trawl.api, id)).flatMap((c) => c.body.data as any[]);
    const paths = docs.map((d) => new URL(d.metadata.sourceURL).pathname);
    expect(paths).toHaveLength(LIMIT);
    expect(new Set(paths).size).toBe(LIMIT);
    expect(paths.filter((p) => !expectedDocPaths().includes(p))).toEqual([]);
    for (const d of docs.filter((x) => /html/.test(x.metadata.contentType ?? ""))) {
      expect(d.metadata.engine, d.metadata.sourceURL).toBe("chromium");
      expect(d.warning, d.metadata.sourceURL).toBeUndefined();
    }
    // the fixture's dead link is the only error (no SCRAPE_BROWSER_CRASHED, no timeout)
    const errors = (await getJson(`${trawl.api}/v2/crawl/${id}/errors`)).body.errors as { code: string }[];
    expect(errors.filter((e) => e.code !== "SCRAPE_HTTP_STATUS")).toEqual([]);
    // a new browser runs, not one of those killed
    const now = chromiumChildren();
    expect(now.filter((pid) => killed.includes(pid))).toEqual([]);
  });
});
