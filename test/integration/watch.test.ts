// WebSocket watch, in both modes: the official JS SDK's watcher() and a raw client see every document, in order,
// and `done` only after the last one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import Firecrawl from "@mendable/firecrawl-js";
import { expectedDocPaths, startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startFixtureSite({ delayMs: 20 }), startTrawl({ mode })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("the Firecrawl JS SDK watcher receives every document", async () => {
    const firecrawl = new Firecrawl({ apiKey: "fc-self-hosted", apiUrl: trawl.api });
    const started = await firecrawl.startCrawl(`${site.origin}/docs/`, { limit: 1000 });
    const watcher = firecrawl.watcher(started.id, { kind: "crawl", pollInterval: 1, timeout: 60 });
    const seen: any[] = [];
    watcher.on("document", (d: any) => seen.push(d));
    const done = new Promise<any>((resolve, reject) => {
      watcher.on("done", resolve);
      watcher.on("error", reject);
    });
    await watcher.start();
    const end = await done;
    expect(end.status).toBe("completed");
    const docs = (await allChunks(trawl.api, started.id)).flatMap((c) => c.body.data);
    expect(docs).toHaveLength(expectedDocPaths().length);
    expect(new Set(seen.map((d) => d.metadata.scrapeId))).toEqual(new Set(docs.map((d: any) => d.metadata.scrapeId)));
    expect(seen).toHaveLength(docs.length);
  });

  it("a raw client: catchup, documents, then close 1000 {type: done}; subprotocol echoed", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, limit: 1000 });
    const ws = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/${res.body.id}`, "my-key");
    const frames: any[] = [];
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
    ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
    await new Promise((r) => ws.addEventListener("open", r));
    expect(ws.protocol).toBe("my-key");
    const close = await closed;
    expect(close).toEqual({ code: 1000, reason: '{"type":"done"}' });
    expect(frames[0].type).toBe("catchup");
    expect(frames[0].data.status).toBe("scraping");
    const fromFrames = [...frames[0].data.data, ...frames.slice(1).map((f) => { expect(f.type).toBe("document"); return f.data; })];
    expect(fromFrames.map((d) => new URL(d.metadata.sourceURL).pathname).sort()).toEqual(expectedDocPaths().sort());
    // after the end: catchup with everything and a terminal status, then done at once
    const again = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/${res.body.id}`);
    const late: any[] = [];
    again.addEventListener("message", (e) => late.push(JSON.parse(String(e.data))));
    await new Promise((r) => again.addEventListener("close", r));
    expect(late).toHaveLength(1);
    expect(late[0].data).toMatchObject({ status: "completed", completed: expectedDocPaths().length });
    expect(late[0].data.data).toHaveLength(expectedDocPaths().length);
  });

  it("closes 1008 for an unknown crawl", async () => {
    const ws = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/00000000-0000-4000-8000-000000000000`);
    const close = await new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
    expect(close).toEqual({ code: 1008, reason: '{"type":"error","error":"Job not found"}' });
  });

  it("a cancel ends the watch", async () => {
    const slow = await startFixtureSite({ delayMs: 400 });
    try {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${slow.origin}/docs/`, limit: 1000 });
      const ws = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/${res.body.id}`);
      const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })));
      await new Promise((r) => ws.addEventListener("open", r));
      await fetch(`${trawl.api}/v2/crawl/${res.body.id}`, { method: "DELETE" });
      expect(await closed).toEqual({ code: 1000, reason: '{"type":"done"}' });
      await waitForEnd(trawl.api, res.body.id);
    } finally {
      await slow.close();
    }
  });
});

describe.each(MODES)("%s mode, 200 pages", (mode) => {
  it("page webhooks delivered = documents stored = document frames watched", async () => {
    const { startSyntheticSite } = await import("../../bench/synthetic-site.ts");
    const { startReceiver } = await import("../fixtures/webhook-receiver.ts");
    const site = await startSyntheticSite(200);
    const receiver = await startReceiver("k");
    const trawl = await startTrawl({ mode, allowLocalWebhooks: true, webhookSecret: "k" });
    try {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/site/p0.html`, crawlEntireDomain: true, limit: 1000, webhook: receiver.url });
      const ws = new WebSocket(`${trawl.api.replace("http", "ws")}/v2/crawl/${res.body.id}`);
      let frames = 0;
      ws.addEventListener("message", (e) => {
        const f = JSON.parse(String(e.data));
        frames += f.type === "catchup" ? f.data.data.length : 1;
      });
      await new Promise((r) => ws.addEventListener("close", r));
      await waitForEnd(trawl.api, res.body.id);
      const end = Date.now() + 30_000;
      while (!receiver.received.some((r) => r.type === "crawl.completed") && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data).length;
      const pageEvents = receiver.received.filter((r) => r.type === "crawl.page").length;
      console.log(`${mode}: 200-page crawl -> documents ${docs}, page webhooks ${pageEvents}, watched frames ${frames}`);
      expect(docs).toBe(200);
      expect(pageEvents).toBe(docs);
      expect(frames).toBe(docs);
    } finally {
      await trawl.stop();
      await site.close();
      await receiver.close();
    }
  });
});
