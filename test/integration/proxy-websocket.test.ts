// PROXY_SERVER and the browser's WebSockets (what docs/api.md and docs/security.md state): a rendered page's WebSocket
// goes through the outbound proxy, as a CONNECT tunnel to host:port with the proxy's credentials (Chromium sends it
// to Trawl's per-page guard proxy, which opens the tunnel through PROXY_SERVER); it never connects directly. The
// WebSocket's host exists only behind the proxy, so a direct connection could not succeed.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { startProxy, type TestProxy } from "../fixtures/proxy.ts";
import { postJson, startTrawl, type Instance } from "./harness.ts";

const BASIC = `Basic ${Buffer.from("crawler:s3cret").toString("base64")}`;

const PAGE = `<!doctype html><html><head><title>Live</title></head><body><main><h1>Live prices</h1><p>Prices arrive over a WebSocket.</p>
<script>
  const done = (text) => { const p = document.createElement("p"); p.id = "done"; p.textContent = text; document.querySelector("main").append(p); };
  const ws = new WebSocket("ws://ws.internal.test:81/prices");
  ws.onopen = () => ws.send("hello");
  ws.onmessage = (e) => done("Socket says " + e.data);
  ws.onerror = () => done("Socket failed");
</script></main></body></html>`;

describe("outbound proxy and the browser's WebSockets (embedded mode: the browser's network code is the same in both)", () => {
  let page: Server;
  let sockets: WebSocketServer;
  let proxy: TestProxy;
  let trawl: Instance;
  const upgrades: string[] = [];

  beforeAll(async () => {
    page = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE));
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    sockets = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await new Promise<void>((r) => sockets.once("listening", r));
    sockets.on("connection", (ws, req) => {
      upgrades.push(`${req.headers.host}${req.url}`);
      ws.on("message", (m) => ws.send(`${String(m)} back`));
    });
    const local = (address: AddressInfo | string | null) => `127.0.0.1:${(address as AddressInfo).port}`;
    proxy = await startProxy({ "page.internal.test:80": local(page.address()), "ws.internal.test:81": local(sockets.address()) });
    trawl = await startTrawl({ mode: "embedded", render: "always", proxyServer: proxy.url, proxyUsername: "crawler", proxyPassword: "s3cret" });
  });

  afterAll(async () => {
    await trawl?.stop();
    await proxy?.close();
    await new Promise((r) => sockets?.close(r));
    await new Promise((r) => page?.close(r));
  });

  it("a page's WebSocket is a CONNECT tunnel through the proxy, with its credentials", async () => {
    const res = await postJson(`${trawl.api}/v2/scrape`, { url: "http://page.internal.test/", actions: [{ type: "wait", selector: "#done" }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.metadata.engine).toBe("chromium");
    expect(res.body.data.markdown).toContain("Socket says hello back");
    expect(upgrades).toEqual(["ws.internal.test:81/prices"]);
    expect(proxy.seen.filter((s) => s.method === "CONNECT")).toEqual([{ method: "CONNECT", target: "ws.internal.test:81", auth: BASIC }]);
  });
});
