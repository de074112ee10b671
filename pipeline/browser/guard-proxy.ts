// The browser's only way out: an HTTP forward proxy on loopback that Chromium is pointed at, one per page (so every
// connection is charged to its page) and one for the browser itself (which refuses everything: a page never uses
// it, and Chromium's own background traffic has no business leaving). Chromium sends here what Playwright's request
// interception does not see: redirects it follows itself, WebSockets, preconnects, https requests made without
// interception. Plain http arrives in absolute form and is made by BrowserNetwork.exchange (redirects handed back
// as they are, so their next hop comes back here); CONNECT (https, WebSockets) becomes a tunnel to the address the
// private-address rule checked (BrowserNetwork.tunnel). A refused request is recorded in the page's traffic and its
// connection is closed without an answer, so the browser reports a network error and no content at all.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../runtime/logger.ts";
import { errorMessage } from "../runtime/errors.ts";
import type { BrowserNetwork, PageTraffic } from "./browser-network.ts";

/** Bytes of a request body the proxy reads before refusing it (the page's byte cap bounds responses). */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

export interface GuardProxyOptions {
  network: BrowserNetwork;
  /** the page's traffic; null: the browser's own proxy, which refuses every request */
  traffic: PageTraffic | null;
  skipTls: boolean;
  log: Logger;
}

export class GuardProxy {
  private readonly opts: GuardProxyOptions;
  private readonly server: Server;
  private readonly sockets = new Set<Duplex>();
  private readonly abort = new AbortController();
  /** `http://127.0.0.1:<port>` once listening */
  url = "";

  private constructor(opts: GuardProxyOptions) {
    this.opts = opts;
    // Chromium's connections call back here: a handler's error closes that connection, never reaches the process
    this.server = createServer((req, res) => void this.onRequest(req, res).catch((err: unknown) => this.dropped(req.url, req.socket, err)));
    this.server.on("connect", (req: IncomingMessage, socket: Socket, head: Buffer) => void this.onConnect(req, socket, head).catch((err: unknown) => this.dropped(req.url, socket, err)));
    this.server.on("error", (err) => opts.log.warn({ err: errorMessage(err) }, "browser guard proxy error"));
    // an Upgrade sent in absolute form (browsers tunnel WebSockets with CONNECT instead): never forwarded
    this.server.on("upgrade", (req: IncomingMessage, socket: Socket) => this.refuse(req.url ?? "", "scheme", "upgrade requests are not forwarded", socket));
    this.server.on("connection", (socket: Socket) => this.track(socket));
  }

  static async start(opts: GuardProxyOptions): Promise<GuardProxy> {
    const proxy = new GuardProxy(opts);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once("error", reject);
      proxy.server.listen(0, "127.0.0.1", () => resolve());
    });
    proxy.url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
    return proxy;
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  private dropped(url: string | undefined, socket: Duplex, err: unknown): void {
    this.opts.log.warn({ url, err: errorMessage(err) }, "browser proxy request failed: connection closed");
    socket.destroy();
  }

  /** Records the refusal and closes the connection without an answer. */
  private refuse(url: string, kind: Parameters<PageTraffic["refuse"]>[1], reason: string, socket: Duplex): void {
    this.opts.traffic?.refuse(url, kind, reason);
    socket.destroy();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? "";
    const traffic = this.opts.traffic;
    if (!traffic) return this.refuse(url, "private", "the browser's own traffic is not let out", req.socket);
    if (!/^https?:\/\//i.test(url)) return this.refuse(url, "scheme", "not a proxy request (absolute-form http only)", req.socket);
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > MAX_REQUEST_BYTES) return this.refuse(url, "too-large", `request body over ${MAX_REQUEST_BYTES} bytes`, req.socket);
        chunks.push(chunk as Buffer);
      }
      const at = Date.now();
      const out = await this.opts.network.exchange({
        url, method: req.method ?? "GET", headers: req.headers, body: chunks.length ? Buffer.concat(chunks) : undefined, skipTls: this.opts.skipTls, signal: this.abort.signal,
      }, traffic);
      if ("refused" in out) return this.refuse(url, out.refused, out.reason, req.socket);
      if ("failed" in out) return void req.socket.destroy();
      traffic.proxied(req.method ?? "GET", url, at, out); // web archives: a main-frame redirect's target      // exchange joins a repeated header with newlines (Playwright's form): a raw response sends each on its own line
      const headers: Record<string, string | string[]> = { "content-length": String(out.body.length) };
      for (const [name, value] of Object.entries(out.headers)) if (name !== "content-length") headers[name] = value.includes("\n") ? value.split("\n") : value;
      res.writeHead(out.status, headers).end(out.body);
    } catch (err) {
      this.opts.log.debug({ url, err: errorMessage(err) }, "proxied browser request not completed");
      req.socket.destroy();
    }
  }

  private async onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const target = req.url ?? "";
    const traffic = this.opts.traffic;
    if (!traffic) return this.refuse(target, "private", "the browser's own traffic is not let out", client);
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(target);
    if (!m) return this.refuse(target, "scheme", "malformed CONNECT target", client);
    const label = `connect://${target}`;
    let upstream: Duplex | { refused: Parameters<PageTraffic["refuse"]>[1]; reason: string };
    try {
      upstream = await this.opts.network.tunnel(m[1] as string, Number(m[2]), this.abort.signal);
    } catch (err) {
      this.opts.log.debug({ target, err: errorMessage(err) }, "browser tunnel not opened");
      return void client.destroy();
    }
    if (!("pipe" in upstream)) return this.refuse(label, upstream.refused, upstream.reason, client);
    traffic.requests++;
    this.track(upstream);
    if (client.destroyed) return void upstream.destroy();
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length) upstream.write(head);
    upstream.on("data", (chunk: Buffer) => {
      traffic.bytes += chunk.length;
      if (traffic.bytes > this.opts.network.maxBytes) {
        traffic.refuse(label, "too-large", `the page's responses exceed ${this.opts.network.maxBytes} bytes`);
        upstream.destroy();
        client.destroy();
      }
    });
    upstream.pipe(client);
    client.pipe(upstream);
    upstream.once("close", () => client.destroy());
    client.once("close", () => upstream.destroy());
  }

  /** Ends every connection and tunnel of the page and stops listening. */
  async close(): Promise<void> {
    this.abort.abort();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
