// The browser inside the network guard, in both modes, with private targets refused: a public-looking site (on an
// address the rule calls public, see public-address.ts) whose pages try every way the browser had to reach a
// private listener — main-frame redirects (301/302/303/307/308) to 127.0.0.1 and to names resolving to it, meta
// refresh, preconnect/dns-prefetch/prefetch, WebSockets, WebRTC TURN over TCP, redirected subresources — through
// scrape (waitFor, screenshot, mobile), crawl and batch. The listener counts every TCP accept: the count must stay
// zero (a port scan needs no bytes), and no document may carry its content. DNS rebinding has its own test
// (browser-rebinding.test.ts), which needs a resolver of its own.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addPublicAddress, PUBLIC_TEST_ADDRESS } from "../fixtures/public-address.ts";
import { SECRET, startCounter, startHostileSite, type Counter, type HostileSite } from "../fixtures/hostile-site.ts";
import { allChunks, getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

/** The vectors whose whole point is the page itself: the page fails, refused, with no content. */
const MAIN_FRAME = /^main-frame|^meta refresh/;

describe.each(MODES)("the browser's connections in %s mode", (mode) => {
  let trawl: Instance;
  let counter: Counter;
  let site: HostileSite;
  let removeAddress: () => void;
  beforeAll(async () => {
    removeAddress = addPublicAddress();
    counter = await startCounter();
    site = await startHostileSite(PUBLIC_TEST_ADDRESS, `http://127.0.0.1:${counter.port}`, [`http://loop.test:${counter.port}`, `http://localhost:${counter.port}`]);
    trawl = await startTrawl({ mode, allowPrivateCrawlTargets: false, resolve: { "loop.test": "127.0.0.1" } });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await counter?.close();
    removeAddress?.();
  });

  it("the public site itself renders through the guard, redirects included (the control)", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/redirect-public`, waitFor: 100 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.metadata.engine).toBe("chromium");
    expect(res.body.data.markdown).toContain("PUBLIC CONTENT");
    expect(res.body.data.metadata.url).toBe(`${site.origin}/public`);
  });

  it("scrape with waitFor: zero connections for every vector; main-frame vectors are refused", async () => {
    const outcomes: Record<string, { accepts: number; status: number; code?: string }> = {};
    for (const [vector, path] of Object.entries(site.vectors)) {
      const before = counter.accepts;
      const res = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}${path}`, waitFor: 300 });
      await new Promise((r) => setTimeout(r, 100)); // a connection still on its way is counted
      outcomes[vector] = { accepts: counter.accepts - before, status: res.status, ...(res.body.code ? { code: res.body.code } : {}) };
      expect(JSON.stringify(res.body), vector).not.toContain(SECRET);
    }
    for (const [vector, o] of Object.entries(outcomes)) {
      expect(o.accepts, vector).toBe(0);
      if (MAIN_FRAME.test(vector)) expect(o.code, vector).toBe("SCRAPE_PRIVATE_TARGET_REFUSED");
      else expect(o.status, vector).toBe(200);
    }
    expect(Object.keys(outcomes).length).toBeGreaterThanOrEqual(12);
  });

  it("screenshot and mobile scrapes, a crawl and a batch: zero connections", async () => {
    const shot = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/redirect-private-302`, formats: ["markdown", "screenshot"] });
    expect(shot.body.code).toBe("SCRAPE_PRIVATE_TARGET_REFUSED");
    const mobile = await postJson(`${trawl.api}/v2/scrape`, { url: `${site.origin}/redirect-private-307`, mobile: true });
    expect(mobile.body.code).toBe("SCRAPE_PRIVATE_TARGET_REFUSED");

    const crawl = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/preconnect`, limit: 5, crawlEntireDomain: true, scrapeOptions: { waitFor: 200 } });
    expect(crawl.status).toBe(200);
    expect((await waitForEnd(trawl.api, crawl.body.id)).at(-1).status).toBe("completed");
    const crawled = (await allChunks(trawl.api, crawl.body.id)).flatMap((c) => c.body.data);
    expect(crawled.map((d: { markdown: string }) => d.markdown).join("\n")).toContain("PRECONNECT PAGE");

    const batch = await postJson(`${trawl.api}/v2/batch/scrape`, {
      urls: ["/redirect-private-308", "/redirect-named-0", "/websocket", "/webrtc"].map((p) => `${site.origin}${p}`), formats: ["markdown", "screenshot"],
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    expect((await waitForEnd(trawl.api, batch.body.id, 90_000, "batch/scrape")).at(-1).status).toBe("completed");
    const docs = (await allChunks(trawl.api, batch.body.id, "", "batch/scrape")).flatMap((c) => c.body.data);
    expect(docs.map((d: { metadata: { sourceURL: string } }) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(["/webrtc", "/websocket"]);
    const errors = await getJson(`${trawl.api}/v2/batch/scrape/${batch.body.id}/errors`);
    expect(errors.body.errors.map((e: { code: string }) => e.code)).toEqual(["SCRAPE_PRIVATE_TARGET_REFUSED", "SCRAPE_PRIVATE_TARGET_REFUSED"]);

    await new Promise((r) => setTimeout(r, 200));
    expect(JSON.stringify([shot.body, mobile.body, crawled, docs])).not.toContain(SECRET);
    expect(counter.accepts).toBe(0);
  });
});
