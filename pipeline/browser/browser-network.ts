// Every byte the browser exchanges with the network is exchanged by Trawl, under the same rule as the static fetcher:
// the private-address rule checked on the address actually connected to, RESOLVE overrides applied, PROXY_SERVER
// used. Two ways in, one set of checks:
// - requests the browser lets Playwright intercept (`fulfil`): made here by undici through the guarded agent, the
//   answer handed back to the browser (redirects as they are, so the next hop is checked again);
// - connections the browser makes itself (`exchange` and `tunnel`, called by GuardProxy, the per-page proxy Chromium
//   is pointed at): redirects Chromium follows without interception, WebSockets, preconnects, https requests that
//   escaped interception. Chromium has no route of its own: its resolver answers nothing (launch flags in
//   chromium-renderer.ts), so anything that is not sent to the proxy fails before a socket opens.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Duplex } from "node:stream";
import type { Route, WebSocketRoute } from "playwright-core";
import { STATUS_CODES } from "node:http";
import { type Dispatcher, request } from "undici";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import { guardedAgent, guardedSocket, PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { isPrivateAddress } from "../net/private-address.ts";
import { proxyAgent, proxyTunnel, type ProxySetting } from "../net/proxy-agent.ts";

export interface NetworkOptions {
  allowPrivate: boolean;
  resolve?: Record<string, string>;
  /** bytes of every response of one page together */
  maxBytes: number;
  /** PROXY_SERVER: the page's requests go through it, as static fetches do (the host is checked by name first) */
  proxy?: ProxySetting;
}

/** Why a request of a page was refused: the renderer reports each kind with its own error code. */
export type RefusalKind = "private" | "dns" | "too-large" | "ad" | "scheme" | "popup";

export interface Refusal {
  url: string;
  reason: string;
  kind: RefusalKind;
}

/** What one page's requests did: refused requests (with the reason) and bytes received. */
export class PageTraffic {
  /** web archives: told each main-frame navigation the browser made through us, as sent and received */
  capture?: (exchange: HttpExchange) => void;
  /** the target of the main frame's last redirect: Chromium fetches it through the guard proxy, not the routes */
  private follow: string | null = null;
  bytes = 0;

  /** A main-frame navigation answered (web archives); a redirect's target is captured when the browser fetches it. */
  navigated(method: string, url: string, at: number, out: Extract<Exchange, { status: number }>): void {
    if (!this.capture) return;
    this.capture(archived(method, url, at, out));
    const location = out.received.location;
    this.follow = out.status >= 300 && out.status < 400 && typeof location === "string" ? new URL(location, url).href : null;
  }

  /** A request made through the guard proxy: captured when it is the main frame's redirect target. */
  proxied(method: string, url: string, at: number, out: Extract<Exchange, { status: number }>): void {
    if (this.follow !== null && this.follow === url) this.navigated(method, url, at, out);
  }
  readonly refused: Refusal[] = [];
  requests = 0;

  refuse(url: string, kind: RefusalKind, reason: string): void {
    this.refused.push({ url, kind, reason });
  }
}

/** The answer to a request made for the browser: the response, or why there is none. */
export type Exchange =
  | { status: number; headers: Record<string, string>; body: Buffer; sent: Record<string, string>; received: Record<string, string | string[] | undefined> }
  | { refused: RefusalKind; reason: string }
  | { failed: "timedout" | "failed" };

export interface ExchangeRequest {
  url: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body?: Buffer | undefined;
  skipTls: boolean;
  signal: AbortSignal;
  /** blockAds: hosts refused for this request */
  blocked?: ((host: string) => boolean) | undefined;
}

const HOP_HEADERS = new Set(["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "proxy-authorization", "te", "trailer", "accept-encoding"]);

/** A response as the web archive keeps it (the browser asked for identity encoding: the body is as received). */
function archived(method: string, url: string, at: number, out: Extract<Exchange, { status: number }>): HttpExchange {
  const u = new URL(url);
  const head = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`, ...Object.entries(out.sent).map(([n, v]) => `${n}: ${v}`)];
  const headers = Object.entries(out.received).flatMap(([n, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x): [string, string] => [n, x])));
  return {
    url, requestHead: `${head.join("\r\n")}\r\n\r\n`, statusLine: `HTTP/1.1 ${out.status} ${STATUS_CODES[out.status] ?? ""}`.trimEnd(),
    statusCode: out.status, headers, payload: out.body, at,
  };
}

const privateRefusal = (message: string | undefined): Exchange => ({ refused: "private", reason: message ?? "private address" });

export class BrowserNetwork {
  private readonly opts: NetworkOptions;
  private readonly verifying: Dispatcher;
  private readonly lenient: Dispatcher;

  constructor(opts: NetworkOptions) {
    this.opts = opts;
    const agent = (rejectUnauthorized: boolean) => opts.proxy
      ? proxyAgent(opts.proxy, { rejectUnauthorized, connections: 32 })
      : guardedAgent({ allowPrivate: opts.allowPrivate, resolve: opts.resolve, rejectUnauthorized, connections: 32 });
    this.verifying = agent(true);
    this.lenient = agent(false);
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  /** Makes an intercepted request of the browser itself and fulfils the route with the answer, or aborts it. */
  async fulfil(route: Route, traffic: PageTraffic, skipTls: boolean, signal: AbortSignal, blocked?: (host: string) => boolean, main = false): Promise<void> {
    const req = route.request();
    const url = req.url();
    const at = Date.now();
    const out = await this.exchange({ url, method: req.method(), headers: await req.allHeaders(), body: req.postDataBuffer() ?? undefined, skipTls, signal, blocked }, traffic);
    if (main && "status" in out) traffic.navigated(req.method(), url, at, out);
    if ("refused" in out) {
      traffic.refuse(url, out.refused, out.reason);
      return route.abort("blockedbyclient");
    }
    if ("failed" in out) return route.abort(out.failed).catch(() => undefined);
    await route.fulfill({ status: out.status, headers: out.headers, body: out.body });
  }

  /** One request made for the browser (redirects not followed), its body counted against the page's byte cap. */
  async exchange(r: ExchangeRequest, traffic: PageTraffic): Promise<Exchange> {
    if (!/^https?:\/\//i.test(r.url)) return { refused: "scheme", reason: "only http and https are fetched" };
    const literal = refusedLiteral(r.url, this.opts.allowPrivate);
    if (literal) return privateRefusal(`private address ${literal}`);
    if (r.blocked?.(new URL(r.url).hostname)) return { refused: "ad", reason: "ad or tracker host (blockAds)" };
    if (this.opts.proxy) {
      // the proxy resolves the name: the rule is applied to our own lookup of it
      const refused = await this.refusedHost(new URL(r.url).hostname);
      if (refused) return refused;
    }
    traffic.requests++;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(r.headers)) {
      if (value !== undefined && !name.startsWith(":") && !HOP_HEADERS.has(name.toLowerCase())) headers[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    headers["accept-encoding"] = "identity"; // the browser is handed the body as received
    let res: Dispatcher.ResponseData;
    try {
      res = await request(r.url, { dispatcher: r.skipTls ? this.lenient : this.verifying, method: r.method as Dispatcher.HttpMethod, headers, body: r.body, signal: r.signal });
    } catch (err) {
      const e = err as { code?: string; cause?: { code?: string }; message?: string };
      if ((e.code ?? e.cause?.code) === PRIVATE_ADDRESS_REFUSED) return privateRefusal(e.message);
      return { failed: r.signal.aborted ? "timedout" : "failed" };
    }
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of res.body) {
        traffic.bytes += (chunk as Buffer).length;
        if (traffic.bytes > this.opts.maxBytes) {
          res.body.destroy();
          return { refused: "too-large", reason: `the page's responses exceed ${this.opts.maxBytes} bytes` };
        }
        chunks.push(chunk as Buffer);
      }
    } catch {
      return { failed: "failed" };
    }
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined || name === "content-length" || name === "content-encoding" || HOP_HEADERS.has(name)) continue;
      out[name] = Array.isArray(value) ? value.join("\n") : value;
    }
    return { status: res.statusCode, headers: out, body: Buffer.concat(chunks), sent: headers, received: res.headers };
  }

  /**
   * A raw connection to `host:port` for a CONNECT the browser sent (https, WebSockets): to the address the rule
   * checked (no second lookup), or through PROXY_SERVER after the rule is applied to our own lookup of the name.
   */
  async tunnel(host: string, port: number, signal: AbortSignal): Promise<Duplex | { refused: RefusalKind; reason: string }> {
    const bare = host.replace(/^\[|\]$/g, "");
    if (!this.opts.allowPrivate && isIP(bare) && isPrivateAddress(bare)) return { refused: "private", reason: `private address ${bare}` };
    if (this.opts.proxy) {
      const refused = await this.refusedHost(bare);
      if (refused) return refused;
      return proxyTunnel(this.opts.proxy, host, port, signal);
    }
    try {
      return await guardedSocket(bare, port, { allowPrivate: this.opts.allowPrivate, resolve: this.opts.resolve });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      if (e.code === PRIVATE_ADDRESS_REFUSED) return { refused: "private", reason: e.message ?? "private address" };
      throw err;
    }
  }

  /**
   * A WebSocket intercepted by Playwright: an IP literal is refused at once (a clear refusal in the page's record);
   * otherwise the browser connects, through GuardProxy, where the name is resolved once and checked on that address.
   */
  async webSocket(ws: WebSocketRoute, traffic: PageTraffic): Promise<void> {
    const url = ws.url();
    const literal = refusedLiteral(url.replace(/^ws/i, "http"), this.opts.allowPrivate);
    if (literal) {
      traffic.refuse(url, "private", `private address ${literal}`);
      await ws.close({ code: 1008, reason: "refused by the crawler" });
      return;
    }
    ws.connectToServer();
  }

  /** The rule on a host name without connecting (for PROXY_SERVER, which resolves the name itself): RESOLVE or DNS. */
  private async refusedHost(hostname: string): Promise<{ refused: "private" | "dns"; reason: string } | null> {
    if (this.opts.allowPrivate) return null;
    const host = hostname.replace(/^\[|\]$/g, "");
    if (isIP(host)) return isPrivateAddress(host) ? { refused: "private", reason: `private address ${host}` } : null;
    const override = this.opts.resolve?.[host.toLowerCase()];
    const addresses = override ? [override] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    const priv = addresses.find((a) => isPrivateAddress(a));
    if (priv) return { refused: "private", reason: `private address ${priv} of ${host}` };
    return addresses.length ? null : { refused: "dns", reason: `no address for ${host}` };
  }

  async close(): Promise<void> {
    await Promise.all([this.verifying.close(), this.lenient.close()]);
  }
}
