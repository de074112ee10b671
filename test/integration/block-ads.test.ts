// blockAds, both modes: a page that loads a script from a host on EasyPrivacy (www.googletagmanager.com, mapped to a
// local server by RESOLVE) — with blockAds (the default) the browser never asks that host; with blockAds: false it
// does and the script runs. The lists are the ones Debian's webext-ublock-origin-chromium installs (BLOCK_ADS_LISTS).
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../pipeline/runtime/config.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const TRACKER = "www.googletagmanager.com";

interface Site {
  origin: string;
  hits: string[];
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const hits: string[] = [];
  let port = 0;
  const server: Server = createServer((req, res) => {
    hits.push(`${req.headers.host}${req.url}`);
    if (req.url === "/gtm.js") {
      res.writeHead(200, { "content-type": "text/javascript" }).end(`document.getElementById("out").textContent = "TRACKER RAN";`);
      return;
    }
    res.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><html><head><title>Ads</title></head><body><h1>A page with a tracker</h1>
      <p>${"Plain words of the page itself, long enough to be a document. ".repeat(5)}</p><p id="out">tracker did not run</p>
      <script src="http://${TRACKER}:${port}/gtm.js"></script></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  return { origin: `http://127.0.0.1:${port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

it("the default lists are installed (scripts/chromium.sh, .ci/run)", () => {
  for (const path of loadConfig({}).blockAdsLists.split(",")) expect(existsSync(path), path).toBe(true);
});

describe.each(MODES)("blockAds (%s mode)", (mode) => {
  let trawl: Instance;
  let site: Site;
  const trackerHits = () => site.hits.filter((h) => h.startsWith(TRACKER)).length;
  beforeAll(async () => {
    site = await startSite();
    trawl = await startTrawl({ mode, render: "always", resolve: { [TRACKER]: "127.0.0.1" } });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("blocks the tracker by default and loads it with blockAds: false", async () => {
    const blocked = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/page`, waitFor: 100 });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);
    expect(blocked.body.data.metadata.engine).toBe("chromium");
    expect(blocked.body.data.markdown).toContain("tracker did not run");
    expect(trackerHits()).toBe(0);
    const allowed = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/page`, waitFor: 100, blockAds: false });
    expect(allowed.body.data.markdown).toContain("TRACKER RAN");
    expect(trackerHits()).toBe(1);
  });

  it("a crawl's pages follow the crawl's blockAds", async () => {
    const before = trackerHits();
    for (const blockAds of [true, false]) {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/page`, limit: 1, scrapeOptions: { blockAds } });
      await waitForEnd(trawl.api, res.body.id, 60_000);
      const [doc] = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data);
      expect(doc.metadata.engine).toBe("chromium");
      expect(doc.markdown).toContain(blockAds ? "tracker did not run" : "TRACKER RAN");
    }
    expect(trackerHits() - before).toBe(1);
  });
});
