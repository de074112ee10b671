// Every request the browser makes goes through here (Playwright request interception): the request is made by
// undici through the same guarded agent as the static fetcher — the private-address rule checked on the address
// actually connected to, RESOLVE overrides applied — and its answer handed back to the browser. Redirects are
// handed back as they are, so the browser's next hop comes through here again. Only http(s) leaves the browser.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import type { Route, WebSocketRoute } from "playwright-core";
import { type Dispatcher, request } from "undici";
import { guardedAgent, PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { isPrivateAddress } from "../net/private-address.ts";
import { proxyAgent, type ProxySetting } from "../net/proxy-agent.ts";

export interface NetworkOptions {
  allowPrivate: boolean;
  resolve?: Record<string, string>;
  /** bytes of every response of one page together */
  maxBytes: number;
  /** PROXY_SERVER: the page's requests go through it, as static fetches do (the host is checked by name first) */
  proxy?: ProxySetting;
}

/** The reason of a request refused by blockAds. */
export const AD_HOST = "ad or tracker host (blockAds)";

/** What one page's requests did: refused requests (with the reason) and bytes received. */
export class PageTraffic {
  bytes = 0;
  readonly refused: { url: string; reason: string }[] = [];
  requests = 0;
}

const HOP_HEADERS = new Set(["host", "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer", "accept-encoding"]);

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

  /** Makes the browser's request itself and fulfils the route with the answer, or aborts it. */
  async fulfil(route: Route, traffic: PageTraffic, skipTls: boolean, signal: AbortSignal, blocked?: (host: string) => boolean): Promise<void> {
    const req = route.request();
    const url = req.url();
    const refuse = (reason: string) => {
      traffic.refused.push({ url, reason });
      return route.abort("blockedbyclient");
    };
    if (!/^https?:\/\//i.test(url)) return refuse("only http and https are fetched");
    const literal = refusedLiteral(url, this.opts.allowPrivate);
    if (literal) return refuse(`private address ${literal}`);
    if (blocked?.(new URL(url).hostname)) return refuse(AD_HOST);
    if (this.opts.proxy) {
      // the proxy resolves the name: the rule is applied to our own lookup of it
      const reason = await this.refusedHost(url);
      if (reason) return refuse(reason);
    }
    traffic.requests++;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(await req.allHeaders())) {
      if (!name.startsWith(":") && !HOP_HEADERS.has(name)) headers[name] = value;
    }
    headers["accept-encoding"] = "identity"; // the browser is handed the body as received
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { dispatcher: skipTls ? this.lenient : this.verifying, method: req.method() as Dispatcher.HttpMethod, headers, body: req.postDataBuffer() ?? undefined, signal });
    } catch (err) {
      const e = err as { code?: string; cause?: { code?: string }; message?: string };
      if ((e.code ?? e.cause?.code) === PRIVATE_ADDRESS_REFUSED) return refuse(e.message ?? "private address");
      return route.abort(signal.aborted ? "timedout" : "failed").catch(() => undefined);
    }
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of res.body) {
        traffic.bytes += (chunk as Buffer).length;
        if (traffic.bytes > this.opts.maxBytes) {
          res.body.destroy();
          return refuse(`the page's responses exceed ${this.opts.maxBytes} bytes`);
        }
        chunks.push(chunk as Buffer);
      }
    } catch {
      return route.abort("failed").catch(() => undefined);
    }
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined || name === "content-length" || name === "content-encoding" || HOP_HEADERS.has(name)) continue;
      out[name] = Array.isArray(value) ? value.join("\n") : value;
    }
    await route.fulfill({ status: res.statusCode, headers: out, body: Buffer.concat(chunks) });
  }

  /** A WebSocket is let through to its server only when its host passes the private-address rule. */
  async webSocket(ws: WebSocketRoute, traffic: PageTraffic): Promise<void> {
    const url = ws.url();
    const reason = await this.refusedHost(url);
    if (reason) {
      traffic.refused.push({ url, reason });
      await ws.close({ code: 1008, reason: "refused by the crawler" });
      return;
    }
    ws.connectToServer();
  }

  /**
   * The rule on a host name without connecting (WebSockets): RESOLVE override or DNS. The browser resolves the name
   * again when it connects, so a DNS answer that changes in between is not caught here (pages' HTTP requests are
   * made by the guarded agent above, where it is).
   */
  private async refusedHost(url: string): Promise<string | null> {
    if (this.opts.allowPrivate) return null;
    const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
    if (isIP(host)) return isPrivateAddress(host) ? `private address ${host}` : null;
    const override = this.opts.resolve?.[host.toLowerCase()];
    const addresses = override ? [override] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    const priv = addresses.find((a) => isPrivateAddress(a));
    return priv ? `private address ${priv} of ${host}` : addresses.length ? null : `no address for ${host}`;
  }

  async close(): Promise<void> {
    await Promise.all([this.verifying.close(), this.lenient.close()]);
  }
}
