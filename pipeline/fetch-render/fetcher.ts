// The Fetcher port and its undici implementation: redirects, time limit, size cap, charset decoding,
// and the private-address guard applied to the address actually connected to.
import { lookup } from "node:dns/promises";
import { type Dispatcher, request } from "undici";
import { errorMessage, PageError } from "../runtime/errors.ts";
import { guardedAgent, PRIVATE_ADDRESS_REFUSED, refusedLiteral } from "../net/guarded-agent.ts";
import { proxyAgent, type ProxySetting } from "../net/proxy-agent.ts";
import { isPrivateAddress } from "../net/private-address.ts";
import { DECODABLE, InflateTooLargeError, inflateCapped, readCapped } from "../net/inflate.ts";
import { decodeBody } from "./charset.ts";
import type { HttpExchange } from "../store/warc/http-exchange.ts";
import { captureHead, exchangeOf, tee, type CapturedHead } from "./exchange-capture.ts";

export interface FetchRequest {
  url: string;
  timeoutMs: number;
  headers?: Record<string, string>;
  /** Return any status instead of failing on >= 400, and any content type (robots.txt, sitemaps). */
  raw?: boolean;
  /** Return pages answered with status >= 400 as results (a single-page scrape returns the error page's document). */
  errorPages?: boolean;
  /** Web archives: called with every request sent and its answer (redirect hops, error pages included) */
  capture?: (exchange: HttpExchange) => void;
}

export interface FetchResult {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  body: string;
  /** The undecoded body (raw requests, and PDFs, whose `body` is empty). */
  bytes?: Buffer;
  /** The response's validators, for a later conditional fetch (If-None-Match, If-Modified-Since). */
  etag?: string;
  lastModified?: string;
  /** Time from the request to the last response's headers (the host's latency, whatever the body's size). */
  headersMs?: number;
}

function validators(headers: Record<string, string | string[] | undefined>): { etag?: string; lastModified?: string } {
  const etag = headers.etag;
  const lastModified = headers["last-modified"];
  return { ...(typeof etag === "string" && etag ? { etag } : {}), ...(typeof lastModified === "string" && lastModified ? { lastModified } : {}) };
}

/** Whether a request is conditional: only then may a 304 stand for a page (the copy its validators came from). */
function hasValidators(headers: Record<string, string> | undefined): boolean {
  return Object.keys(headers ?? {}).some((name) => /^if-(none-match|modified-since)$/i.test(name));
}

/** Seconds or an HTTP date -> milliseconds from now. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

export interface Fetcher {
  fetch(req: FetchRequest): Promise<FetchResult>;
  close(): Promise<void>;
}

export interface UndiciFetcherOptions {
  userAgent: string;
  maxBytes: number;
  maxRedirects: number;
  allowPrivate: boolean;
  /** host -> address overrides (like curl --resolve), for tests of several host names on loopback */
  resolve?: Record<string, string>;
  /** outbound HTTP proxy (PROXY_SERVER): every page fetch goes through it (CONNECT tunnels) */
  proxy?: ProxySetting;
}

const TEXT_TYPES = /^(text\/|application\/(xhtml\+xml|xml|json|ld\+json|rss\+xml|atom\+xml)|[a-z]+\/[a-z.+-]*\+xml)/i;

export class UndiciFetcher implements Fetcher {
  private readonly agent: Dispatcher;
  private readonly opts: UndiciFetcherOptions;
  /** host:port -> the address last connected to (WARC-IP-Address) */
  private readonly peers = new Map<string, string>();

  constructor(opts: UndiciFetcherOptions) {
    this.opts = opts;
    const { proxy } = opts;
    const onConnected = (hostPort: string, address: string) => {
      if (this.peers.size > 10_000) this.peers.clear();
      this.peers.set(hostPort, address);
    };
    this.agent = proxy
      ? proxyAgent(proxy, { rejectUnauthorized: false, connections: 64 })
      : guardedAgent({ allowPrivate: opts.allowPrivate, resolve: opts.resolve, onConnected });
  }

  /** A body that is not returned: read (capped) for the archive when captured, else dumped. */
  private async skipBody(res: Dispatcher.ResponseData, req: FetchRequest, record: (payload: Buffer) => void): Promise<void> {
    if (!req.capture) return void (await res.body.dump());
    const payload = await readCapped(res.body, this.opts.maxBytes, () => res.body.destroy()).catch(() => null);
    if (payload) record(payload);
  }

  /**
   * Through a proxy the proxy resolves the target, so the private-address rule is checked here on our own lookup
   * of the host (a DNS answer that changes between the two lookups is not caught: without a proxy the rule holds
   * on the connected address).
   */
  private async checkProxiedTarget(url: string): Promise<void> {
    if (!this.opts.proxy || this.opts.allowPrivate) return;
    const host = new URL(url).hostname;
    let addresses: { address: string }[];
    try {
      addresses = await lookup(host, { all: true });
    } catch (err) {
      throw toPageError(err, 0);
    }
    const privateOne = addresses.find((a) => isPrivateAddress(a.address));
    if (privateOne) throw new PageError("SCRAPE_PRIVATE_TARGET_REFUSED", `refused to fetch private address ${privateOne.address} of ${host} (set ALLOW_PRIVATE_CRAWL_TARGETS=true to allow)`);
  }

  async fetch(req: FetchRequest): Promise<FetchResult> {
    const signal = AbortSignal.timeout(req.timeoutMs);
    let current = req.url;
    let headersMs: number;
    for (let hop = 0; ; hop++) {
      // IP literals skip DNS lookup, so they are checked here
      const literal = refusedLiteral(current, this.opts.allowPrivate);
      if (literal) {
        throw new PageError("SCRAPE_PRIVATE_TARGET_REFUSED", `refused to fetch private address ${literal} (set ALLOW_PRIVATE_CRAWL_TARGETS=true to allow)`);
      }
      await this.checkProxiedTarget(current);
      let res;
      const sent = performance.now();
      const requestFields = {
        "user-agent": this.opts.userAgent, accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "accept-encoding": "gzip, deflate, br", ...req.headers,
      };
      const head: CapturedHead = {};
      const at = Date.now();
      try {
        res = await request(current, {
          dispatcher: req.capture ? this.agent.compose(captureHead(head)) : this.agent,
          method: "GET",
          signal,
          headers: requestFields,
        });
      } catch (err) {
        throw toPageError(err, req.timeoutMs);
      }
      headersMs = performance.now() - sent;
      const hopUrl = current;
      const { statusCode, headers } = res;
      const record = (payload: Buffer) => {
        const u = new URL(hopUrl);
        const peerIp = this.peers.get(`${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`);
        req.capture?.(exchangeOf({ url: hopUrl, statusCode, head, headers, requestFields, payload, at, ...(peerIp ? { peerIp } : {}) }));
      };
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location) {
        await this.skipBody(res, req, record);
        if (hop >= this.opts.maxRedirects) throw new PageError("SCRAPE_TOO_MANY_REDIRECTS", `more than ${this.opts.maxRedirects} redirects`);
        current = new URL(String(location), current).href;
        continue;
      }
      if (res.statusCode === 304 && !req.raw && !hasValidators(req.headers)) {
        await this.skipBody(res, req, record);
        throw new PageError("SCRAPE_UNEXPECTED_NOT_MODIFIED", "HTTP 304 Not Modified to a request that carried no validators (If-None-Match, If-Modified-Since): there is no earlier copy of the page to reuse", { statusCode: 304 });
      }
      const contentType = String(res.headers["content-type"] ?? (req.raw ? "application/octet-stream" : "text/html"));
      if (res.statusCode >= 400 && !req.raw && !req.errorPages) {
        await this.skipBody(res, req, record);
        const retriable = res.statusCode >= 500 || res.statusCode === 429;
        throw new PageError("SCRAPE_HTTP_STATUS", `HTTP ${res.statusCode}`, {
          statusCode: res.statusCode, retriable, retryAfterMs: retryAfterMs(res.headers["retry-after"]),
        });
      }
      const pdf = /^application\/(pdf|x-pdf)/i.test(contentType) || (/^application\/octet-stream/i.test(contentType) && /\.pdf$/i.test(new URL(current).pathname));
      if (!req.raw && !pdf && !TEXT_TYPES.test(contentType)) {
        await this.skipBody(res, req, record);
        throw new PageError("SCRAPE_UNSUPPORTED_FILE_ERROR", `unsupported content type ${contentType}`, { statusCode: res.statusCode });
      }
      // a compressed body is inflated as it arrives; FETCH_MAX_BYTES caps the inflated size (a small gzip can
      // inflate to gigabytes). Unknown codings are kept as they are.
      const encoding = String(res.headers["content-encoding"] ?? "").trim().toLowerCase();
      const codings = encoding.split(",").map((c) => c.trim()).filter((c) => c && c !== "identity");
      let bytes: Buffer;
      const received: Buffer[] = [];
      // the body as received is kept aside only when it is inflated here (otherwise it is `bytes` itself)
      const source = req.capture && codings.length > 0 ? tee(res.body, received) : res.body;
      try {
        bytes = codings.length > 0 && codings.every((c) => DECODABLE.has(c))
          ? await inflateCapped(source, encoding, this.opts.maxBytes)
          : await readCapped(source, this.opts.maxBytes, () => res.body.destroy());
      } catch (err) {
        res.body.destroy();
        if (err instanceof InflateTooLargeError) {
          throw new PageError("SCRAPE_TOO_LARGE", `response larger than ${this.opts.maxBytes} bytes${codings.length ? " once decompressed" : ""}`, { statusCode: res.statusCode });
        }
        const code = stringCode(err);
        if (!isTimeout(err) && (code.startsWith("Z_") || code.startsWith("ERR__"))) {
          throw new PageError("SCRAPE_SITE_ERROR", `response body is not valid ${encoding}: ${errorMessage(err)}`, { statusCode: res.statusCode, cause: err });
        }
        throw toPageError(err, req.timeoutMs, res.statusCode);
      }
      if (req.capture) record(codings.length > 0 ? Buffer.concat(received) : bytes);
      const type = pdf ? "application/pdf" : (contentType.split(";")[0]?.trim() ?? contentType);
      if (pdf) return { url: req.url, finalUrl: current, statusCode: res.statusCode, contentType: type, body: "", bytes, headersMs, ...validators(res.headers) };
      const body = decodeBody(bytes, contentType);
      return { url: req.url, finalUrl: current, statusCode: res.statusCode, contentType: type, body, ...(req.raw ? { bytes } : {}), headersMs, ...validators(res.headers) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/**
 * The string `code` of an error or of its cause, or "". Not every error's `code` is a string: the DOMException that
 * `AbortSignal.timeout` raises when the time limit falls while the body is arriving has the number 23.
 */
function stringCode(err: unknown): string {
  for (const e of [err, (err as { cause?: unknown } | undefined)?.cause]) {
    const code = (e as { code?: unknown } | null | undefined)?.code;
    if (typeof code === "string") return code;
  }
  return "";
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

function isTimeout(err: unknown): boolean {
  const name = (err as { name?: unknown } | null | undefined)?.name;
  return name === "TimeoutError" || name === "AbortError" || TIMEOUT_CODES.has(stringCode(err));
}

/**
 * A failed request or body as a page error. `statusCode` is given when the headers had arrived: a body that arrives
 * slower than the time limit is a timeout (retriable) like a server that never answers.
 */
function toPageError(err: unknown, timeoutMs: number, statusCode?: number): PageError {
  const message = errorMessage(err);
  const code = stringCode(err);
  if (isTimeout(err)) {
    const what = statusCode === undefined ? "no complete response" : `the body (HTTP ${statusCode}) did not arrive`;
    return new PageError("SCRAPE_TIMEOUT", `${what} within ${timeoutMs} ms`, { retriable: true, cause: err, ...(statusCode === undefined ? {} : { statusCode }) });
  }
  if (code === PRIVATE_ADDRESS_REFUSED) return new PageError("SCRAPE_PRIVATE_TARGET_REFUSED", `${message} (set ALLOW_PRIVATE_CRAWL_TARGETS=true to allow)`, { cause: err });
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return new PageError("SCRAPE_DNS_RESOLUTION_ERROR", `DNS lookup failed: ${message}`, { retriable: code === "EAI_AGAIN", cause: err });
  if (/CERT|SSL|TLS/i.test(code)) return new PageError("SCRAPE_SSL_ERROR", message || "TLS error", { cause: err });
  return new PageError("SCRAPE_CONNECTION_ERROR", `${code || "connection error"}: ${message}`, { retriable: true, cause: err, ...(statusCode === undefined ? {} : { statusCode }) });
}
