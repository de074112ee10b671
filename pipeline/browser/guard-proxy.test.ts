import { createServer } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../runtime/logger.ts";
import { startCounter, type Counter } from "../../test/fixtures/hostile-site.ts";
import { BrowserNetwork, PageTraffic } from "./browser-network.ts";
import { GuardProxy } from "./guard-proxy.ts";

/** Sends raw bytes to the proxy; resolves with what it answered before closing (or after `ms`). */
function ask(proxy: GuardProxy, text: string, ms = 1500): Promise<string> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve) => {
    const sock = connect(Number(port), "127.0.0.1", () => sock.write(text));
    let got = "";
    const done = () => {
      sock.destroy();
      resolve(got);
    };
    sock.on("data", (d) => {
      got += d.toString("latin1");
      if (/^HTTP\/1\.1 200 Connection Established/.test(got)) done();
    });
    sock.on("close", done);
    sock.on("error", done);
    setTimeout(done, ms).unref();
  });
}

describe("GuardProxy", () => {
  const open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });
  async function setup(allowPrivate: boolean, traffic: PageTraffic | null): Promise<{ proxy: GuardProxy; counter: Counter }> {
    const network = new BrowserNetwork({ allowPrivate, maxBytes: 1_000_000 });
    const proxy = await GuardProxy.start({ network, traffic, skipTls: true, log: createLogger("silent") });
    const counter = await startCounter();
    open.push(proxy, counter, network);
    return { proxy, counter };
  }

  it("refuses CONNECT and absolute-form requests to a private address without connecting, and records why", async () => {
    const traffic = new PageTraffic();
    const { proxy, counter } = await setup(false, traffic);
    expect(await ask(proxy, `CONNECT 127.0.0.1:${counter.port} HTTP/1.1\r\nhost: 127.0.0.1:${counter.port}\r\n\r\n`)).toBe("");
    expect(await ask(proxy, `CONNECT localhost:${counter.port} HTTP/1.1\r\nhost: localhost\r\n\r\n`)).toBe("");
    expect(await ask(proxy, `GET http://127.0.0.1:${counter.port}/ HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`)).toBe("");
    expect(await ask(proxy, `GET http://localhost:${counter.port}/ HTTP/1.1\r\nhost: localhost\r\n\r\n`)).toBe("");
    expect(counter.accepts).toBe(0);
    expect(traffic.refused.map((r) => r.kind)).toEqual(["private", "private", "private", "private"]);
  });

  it("refuses what is not a proxy request, and the browser's own proxy refuses everything", async () => {
    const traffic = new PageTraffic();
    const { proxy, counter } = await setup(true, traffic);
    expect(await ask(proxy, "GET /local HTTP/1.1\r\nhost: x\r\n\r\n")).toBe("");
    expect(traffic.refused.map((r) => r.kind)).toEqual(["scheme"]);
    const own = await setup(true, null);
    expect(await ask(own.proxy, `CONNECT 127.0.0.1:${counter.port} HTTP/1.1\r\n\r\n`)).toBe("");
    expect(await ask(own.proxy, `GET http://127.0.0.1:${counter.port}/ HTTP/1.1\r\nhost: x\r\n\r\n`)).toBe("");
    expect(counter.accepts + own.counter.accepts).toBe(0);
  });

  it("forwards a response with a repeated header (two Set-Cookie) as two header lines", async () => {
    const site = createServer((_req, res) => res.writeHead(302, { location: "/next", "set-cookie": ["a=1; Path=/", "b=2; Path=/"] }).end());
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    open.push({ close: () => new Promise<void>((r) => site.close(() => r())) });
    const { proxy } = await setup(true, new PageTraffic());
    const port = (site.address() as AddressInfo).port;
    const answer = await ask(proxy, `GET http://127.0.0.1:${port}/ HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 302/);
    expect(answer.match(/^set-cookie: .*$/gim)).toEqual(["set-cookie: a=1; Path=/", "set-cookie: b=2; Path=/"]);
  });

  it("tunnels and forwards when the rule allows it (the control)", async () => {
    const traffic = new PageTraffic();
    const { proxy, counter } = await setup(true, traffic);
    expect(await ask(proxy, `CONNECT 127.0.0.1:${counter.port} HTTP/1.1\r\n\r\n`)).toMatch(/^HTTP\/1\.1 200 Connection Established/);
    expect(await ask(proxy, `GET http://127.0.0.1:${counter.port}/ HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`)).toContain("TRAWL-PRIVATE-SECRET");
    await new Promise((r) => setTimeout(r, 50));
    expect(counter.accepts).toBe(2);
    expect(traffic.requests).toBe(2);
  });
});
