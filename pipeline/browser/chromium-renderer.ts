// The Renderer on Debian's Chromium through playwright-core (no browser download: the system binary). One browser
// process, at most `concurrency` pages at once, one fresh context per page (no cookies, storage or cache shared
// between pages), downloads refused. The browser has no network of its own: every request Playwright can intercept
// is made by BrowserNetwork, and everything else Chromium would connect to goes to the page's GuardProxy (its
// resolver answers nothing, so a connection that is not sent to the proxy cannot even find an address). A crashed or
// hung browser is replaced and the page tried once more on the new one. Every callback Playwright makes for a page
// (its routes, the context's events) goes through the page's PageGuard: an error there fails that page
// (SCRAPE_BROWSER_ERROR), never the process. Popups are closed as they open and every request of theirs that
// Playwright routes is refused (a WebSocket cannot be told apart by page: it is checked like the page's own).
import { existsSync } from "node:fs";
import { chromium, devices, errors, type Browser, type BrowserServer, type Page, type Route, type WebSocketRoute } from "playwright-core";
import { errorCode, errorMessage, PageError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { BrowserNetwork, PageTraffic, type Refusal } from "./browser-network.ts";
import { GuardProxy } from "./guard-proxy.ts";
import { fromOtherPage, isMainNavigation, PageGuard } from "./page-guard.ts";
import { brandingOf } from "./branding-sampler.ts";
import { runActions, screenshotOf } from "./page-actions.ts";
import type { Renderer, RendererStatus, RenderRequest, RenderResult } from "./renderer.ts";
import { Slots } from "./slots.ts";
import type { ProxySetting } from "../net/proxy-agent.ts";
import type { AdHosts } from "./ad-hosts.ts";
import type { Metrics } from "../runtime/metrics.ts";

export interface ChromiumOptions {
  executablePath: string;
  /** pages rendered at once (RENDER_CONCURRENCY) */
  concurrency: number;
  allowPrivate: boolean;
  resolve?: Record<string, string>;
  /** cap of the rendered HTML and of all the page's responses together */
  maxBytes: number;
  userAgent: string;
  log: Logger;
  /** a browser that does not answer a probe within this is replaced */
  probeTimeoutMs?: number;
  /** the process's metrics: pool use, render time, browser restarts, refused requests */
  metrics?: Pick<Metrics, "renderPoolSize" | "renderInUse" | "renderSeconds" | "browserRestarts" | "renderRefused">;
  /** blockAds: the ad and tracker hosts refused (absent: nothing is blocked) */
  adHosts?: AdHosts;
  /** PROXY_SERVER: the pages' HTTP requests (made by Trawl for the browser) go through it */
  proxy?: ProxySetting;
}

export const LAUNCH_FLAGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
  // Chromium's own resolver answers nothing but the proxies' address: with every connection sent to a proxy it needs
  // none, and a DNS prefetch or a connection that bypassed the proxy would find no address (RESOLVE is applied by
  // Trawl's own lookups, where the private-address rule is checked)
  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
  // WebRTC may only use the proxy (TCP through it), never UDP or a direct connection of its own
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
];

const DESKTOP = { viewport: { width: 1920, height: 1080 } };
const MOBILE = devices["Pixel 7"] as (typeof devices)[string];

/** What the route handler of one page attempt needs (`document`: answered once, then cleared). */
interface PageRouting {
  document: RenderRequest["document"];
  ads: AdHosts | undefined;
  traffic: PageTraffic;
  skipTls: boolean;
  signal: AbortSignal;
}

/** Playwright's refusal to read a page that is navigating (a meta refresh or a script moved it on meanwhile). */
const NAVIGATING = /is navigating and changing the content|Execution context was destroyed/;

/** The browser went away under a page: the page is tried once more on a new one. */
class BrowserLost extends Error {}

/** The browser process is gone (the disconnect event may come after the failed call, so the error is read too). */
function gone(live: Live, err: unknown): boolean {
  const proc = live.server.process();
  return !live.browser.isConnected() || proc.exitCode !== null || proc.signalCode !== null || /Browser closed|browser has been closed|Target crashed/i.test(errorMessage(err));
}

interface Live {
  server: BrowserServer;
  browser: Browser;
  /** the browser-wide proxy: refuses everything (pages use their own) */
  proxy: GuardProxy;
}

/**
 * The refusal that failed a navigation: the page's own URL refused (by interception), else the first refusal that
 * is not an ad or a popup (neither is ever the main frame): a redirect Chromium followed through the proxy, a meta refresh.
 */
function navigationRefusal(traffic: PageTraffic): Refusal | undefined {
  return traffic.refused.find((r) => r.kind !== "ad" && r.kind !== "popup");
}

/** The error a page fails with when the browser refused the request that was to give its content. */
function refusalError(r: Refusal): PageError {
  if (r.kind === "too-large") return new PageError("SCRAPE_TOO_LARGE", `refused: ${r.reason}`);
  if (r.kind === "dns") return new PageError("SCRAPE_DNS_RESOLUTION_ERROR", `refused: ${r.reason}`, { retriable: true });
  if (r.kind === "private") return new PageError("SCRAPE_PRIVATE_TARGET_REFUSED", `refused: ${r.reason} (set ALLOW_PRIVATE_CRAWL_TARGETS=true to allow)`);
  return new PageError("SCRAPE_SITE_ERROR", `refused: ${r.reason}`);
}

export class ChromiumRenderer implements Renderer {
  private readonly opts: ChromiumOptions;
  private readonly log: Logger;
  private readonly network: BrowserNetwork;
  private readonly slots: Slots;
  private live: Promise<Live> | null = null;
  /** the browser `live` resolved to */
  private current: Live | null = null;
  private closed = false;
  /** browsers launched so far (the first, and each replacement) */
  launches = 0;

  constructor(opts: ChromiumOptions) {
    this.opts = opts;
    this.log = opts.log.child({ component: "renderer" });
    this.network = new BrowserNetwork({ allowPrivate: opts.allowPrivate, resolve: opts.resolve, maxBytes: opts.maxBytes, ...(opts.proxy ? { proxy: opts.proxy } : {}) });
    this.slots = new Slots(opts.concurrency);
    opts.metrics?.renderPoolSize.set(opts.concurrency);
  }

  status(): RendererStatus {
    return existsSync(this.opts.executablePath)
      ? { available: true, executablePath: this.opts.executablePath }
      : { available: false, executablePath: this.opts.executablePath, reason: `no Chromium at ${this.opts.executablePath} (install the chromium package or set CHROMIUM_PATH)` };
  }

  /** The browser process's id (tests kill it to prove a crash is survived). */
  async browserPid(): Promise<number | undefined> {
    return (await this.browser()).server.process().pid;
  }

  async render(req: RenderRequest): Promise<RenderResult> {
    const status = this.status();
    if (!status.available) throw new PageError("SCRAPE_BROWSER_UNAVAILABLE", `this page needs a browser, and none is available: ${status.reason}`);
    return this.slots.run(() => this.measured(req));
  }

  /** One page (tried again once on a new browser when the first one went away), counted in the metrics. */
  private async measured(req: RenderRequest): Promise<RenderResult> {
    const m = this.opts.metrics;
    m?.renderInUse.inc();
    const end = m?.renderSeconds.startTimer();
    let outcome = "ok";
    try {
      return await this.withRetry(req);
    } catch (err) {
      outcome = errorCode(err);
      throw err;
    } finally {
      m?.renderInUse.dec();
      end?.({ outcome });
    }
  }

  private async withRetry(req: RenderRequest): Promise<RenderResult> {
    try {
      return await this.attempt(req);
    } catch (err) {
      if (!(err instanceof BrowserLost)) throw err;
      this.log.warn({ url: req.url, err: err.message }, "browser lost during a page: replaced, page tried again");
      try {
        return await this.attempt(req);
      } catch (again) {
        if (again instanceof BrowserLost) throw new PageError("SCRAPE_BROWSER_CRASHED", `the browser crashed twice on this page: ${again.message}`, { retriable: true });
        throw again;
      }
    }
  }

  private browser(): Promise<Live> {
    if (this.closed) return Promise.reject(new PageError("SCRAPE_BROWSER_UNAVAILABLE", "the renderer is closed"));
    this.live ??= this.launch().catch((err) => {
      this.live = null;
      throw new PageError("SCRAPE_BROWSER_UNAVAILABLE", `Chromium did not start: ${errorMessage(err)}`, { retriable: true, cause: err });
    });
    return this.live;
  }

  private async launch(): Promise<Live> {
    const started = Date.now();
    const proxy = await GuardProxy.start({ network: this.network, traffic: null, skipTls: false, log: this.log });
    try {
      // Playwright adds --proxy-bypass-list=<-loopback>: loopback goes through the proxy too
      const server = await chromium.launchServer({
        executablePath: this.opts.executablePath, headless: true, chromiumSandbox: false, args: LAUNCH_FLAGS, proxy: { server: proxy.url },
      });
      const browser = await chromium.connect(server.wsEndpoint());
      this.launches++;
      if (this.launches > 1) this.opts.metrics?.browserRestarts.inc();
      const live: Live = { server, browser, proxy };
      this.current = live;
      server.process().once("exit", (code, signal) => {
        if (this.live && !this.closed) this.log.warn({ code, signal }, "Chromium exited: a new one starts with the next page");
        this.forget(live);
      });
      browser.once("disconnected", () => this.forget(live));
      this.log.info({ pid: server.process().pid, ms: Date.now() - started }, "Chromium started");
      return live;
    } catch (err) {
      await proxy.close();
      throw err;
    }
  }

  /** The next page launches a new browser (when `live` is still the current one). */
  private forget(live: Live): void {
    if (this.current !== live) return;
    this.current = null;
    this.live = null;
    void live.proxy.close();
  }

  private lost(live: Live, err: unknown): BrowserLost {
    this.forget(live);
    live.server.kill().catch((e: unknown) => this.log.debug({ err: errorMessage(e) }, "kill of a lost Chromium failed"));
    return new BrowserLost(errorMessage(err));
  }

  /** Kills a browser that stopped answering, so the next page gets a new one. */
  private async replaceIfHung(live: Live): Promise<boolean> {
    const probe = live.browser.newContext().then((c) => c.close()).then(() => true, () => false);
    const alive = await Promise.race([probe, new Promise<boolean>((r) => setTimeout(() => r(false), this.opts.probeTimeoutMs ?? 5000).unref())]);
    if (alive) return false;
    this.log.warn({ pid: live.server.process().pid }, "Chromium does not answer: killed, a new one starts");
    this.forget(live);
    await live.server.kill().catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, "kill of a hung Chromium failed"));
    return true;
  }

  private async attempt(req: RenderRequest): Promise<RenderResult> {
    const live = await this.browser();
    const deadline = Date.now() + req.timeoutMs;
    const abort = new AbortController();
    const traffic = new PageTraffic();
    if (req.capture) traffic.capture = req.capture;
    const device = req.mobile ? MOBILE : { ...DESKTOP, userAgent: this.opts.userAgent };
    const skipTls = req.skipTlsVerification ?? true;
    const proxy = await GuardProxy.start({ network: this.network, traffic, skipTls, log: this.log });
    let context;
    try {
      context = await live.browser.newContext({
        ...device, acceptDownloads: false, serviceWorkers: "block", ignoreHTTPSErrors: skipTls, proxy: { server: proxy.url },
        ...(req.headers ? { extraHTTPHeaders: req.headers } : {}),
      });
    } catch (err) {
      await proxy.close();
      throw gone(live, err) ? this.lost(live, err) : err;
    }
    let timer: NodeJS.Timeout | undefined;
    // every callback Playwright makes for this page goes through the guard: its error fails this page, not the process
    const guard = new PageGuard(this.log, req.url);
    try {
      const page = await context.newPage();
      const routing: PageRouting = { document: req.document, ads: req.blockAds !== false ? this.opts.adHosts : undefined, traffic, skipTls, signal: abort.signal };
      // popups (window.open, target=_blank, actions that open one) are closed; their requests are refused below
      context.on("page", guard.listener("popup", (popup: Page) => popup === page ? undefined : this.closePopup(popup, req.url)));
      await context.route("**/*", guard.route("request", (route: Route) => this.route(route, page, routing), (route) => route.abort("failed")));
      await context.routeWebSocket(/.*/, guard.route("WebSocket", (ws: WebSocketRoute) => this.network.webSocket(ws, traffic), (ws) => ws.close({ code: 1011, reason: "refused by the crawler" })));
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PageError("SCRAPE_TIMEOUT", `the page was not rendered within ${req.timeoutMs} ms`, { retriable: true })), req.timeoutMs);
      });
      return await Promise.race([this.load(page, req, deadline, traffic), timedOut, guard.failed]);
    } catch (caught) {
      abort.abort();
      if (gone(live, caught)) throw this.lost(live, caught);
      // a Playwright wait bounded by the page's deadline ran out (it may come before the page's own timer)
      const err = caught instanceof errors.TimeoutError
        ? new PageError("SCRAPE_TIMEOUT", `the page was not rendered within ${req.timeoutMs} ms (${errorMessage(caught).split("\n")[0]})`, { retriable: true, cause: caught })
        : caught;
      if (err instanceof PageError && err.code === "SCRAPE_TIMEOUT" && (await this.replaceIfHung(live))) throw new BrowserLost("hung");
      throw err;
    } finally {
      guard.end();
      clearTimeout(timer);
      abort.abort();
      await context.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "context close failed (browser gone)"));
      await proxy.close();
    }
  }

  /**
   * One intercepted request of the page's context: the page's first navigation answered with the document already
   * fetched (RENDER=auto), a popup's request refused, everything else made by BrowserNetwork (ad hosts refused).
   */
  private async route(route: Route, page: Page, p: PageRouting): Promise<void> {
    const request = route.request();
    if (fromOtherPage(request, page)) {
      p.traffic.refuse(request.url(), "popup", "popups are not opened (window.open, target=_blank)");
      return route.abort("blockedbyclient").catch(() => undefined); // the popup may be closed already: nothing left to refuse

    }
    const doc = p.document;
    if (doc && request.isNavigationRequest() && request.url() === doc.finalUrl) {
      p.document = undefined; // only the first navigation: a reload or a later visit goes to the site
      const { statusCode, contentType, body } = doc;
      // a navigation cancelled meanwhile (a script, a popup) refuses the fulfil: the page goes on without this document
      return route.fulfill({ status: statusCode, contentType: /charset/i.test(contentType) ? contentType : `${contentType}; charset=utf-8`, body })
        .catch(() => route.abort("failed").catch(() => undefined));
    }
    // the page itself is never an "ad": only what it loads (subresources, frames) is checked against the list
    const ads = p.ads;
    const blocked = ads && !isMainNavigation(request) ? (host: string) => ads.blocks(host) : undefined;
    return this.network.fulfil(route, p.traffic, p.skipTls, p.signal, blocked, isMainNavigation(request)).catch(async (err: unknown) => {
      this.log.debug({ url: request.url(), err: errorMessage(err) }, "browser request not completed");
      await route.abort("failed").catch(() => undefined); // not left hanging (already answered, or the page is gone)
    });
  }

  /** A popup is closed as soon as it opens (its requests were refused); a close that fails leaves it refused. */
  private async closePopup(popup: Page, url: string): Promise<void> {
    this.log.debug({ url, popup: popup.url() }, "popup closed");
    await popup.close().catch((err: unknown) => this.log.debug({ url, err: errorMessage(err) }, "popup close failed (page gone)"));
  }

  private async load(page: Page, req: RenderRequest, deadline: number, traffic: PageTraffic): Promise<RenderResult> {
    const left = () => Math.max(1, deadline - Date.now());
    let response;
    try {
      response = await page.goto(req.document?.finalUrl ?? req.url, { waitUntil: "load", timeout: left() });
    } catch (err) {
      const refused = navigationRefusal(traffic);
      if (refused && /net::ERR_/.test(errorMessage(err))) throw refusalError(refused);
      if (/closed|crash/i.test(errorMessage(err))) throw err; // the browser went away: the caller decides
      throw new PageError(/Timeout/.test(errorMessage(err)) ? "SCRAPE_TIMEOUT" : "SCRAPE_CONNECTION_ERROR", `browser navigation failed: ${errorMessage(err).split("\n")[0]}`, { retriable: true, cause: err });
    }
    // scripts that fetch their content after load: wait until the network is quiet (bounded)
    await page.waitForLoadState("networkidle", { timeout: Math.min(left(), 3000) }).catch((err: unknown) => this.log.debug({ url: req.url, err: errorMessage(err) }, "network not idle; going on"));
    if (req.waitForMs) await page.waitForTimeout(Math.min(req.waitForMs, left()));
    const actions = req.actions?.length ? await runActions(page, req.actions, deadline) : undefined;
    const { body, url } = await this.settledContent(page, traffic, left);
    if (Buffer.byteLength(body) > this.opts.maxBytes) throw new PageError("SCRAPE_TOO_LARGE", `rendered page larger than ${this.opts.maxBytes} bytes`);
    const screenshot = req.screenshot ? await screenshotOf(page, req.screenshot) : undefined;
    const branding = req.branding ? await brandingOf(page) : undefined;
    const contentType = (response?.headers()["content-type"] ?? "text/html").split(";")[0]?.trim() ?? "text/html";
    const adsBlocked = traffic.refused.filter((r) => r.kind === "ad").length;
    for (const r of traffic.refused) this.opts.metrics?.renderRefused.inc({ reason: r.kind === "ad" || r.kind === "private" ? r.kind : "other" });
    this.log.debug({ url: req.url, requests: traffic.requests, refused: traffic.refused.length, adsBlocked, bytes: traffic.bytes }, "page rendered");
    return {
      url: req.url, finalUrl: url, statusCode: response?.status() ?? 200, contentType, body,
      ...(screenshot ? { screenshot } : {}), ...(branding ? { branding } : {}), ...(actions ? { actions } : {}),
      ...(traffic.refused.length ? { refused: traffic.refused.map(({ url, reason }) => ({ url, reason })) } : {}),
    };
  }

  /**
   * The page's HTML and address once it stays put. A script or meta refresh may navigate while the page is read
   * (Playwright then refuses to read it): the read waits for the new document (up to 2 s), three times at most. A navigation that
   * failed (the browser shows its error page, which is not the site's) fails the page with what refused it.
   */
  private async settledContent(page: Page, traffic: PageTraffic, left: () => number): Promise<{ body: string; url: string }> {
    for (let tries = 1; ; tries++) {
      await page.waitForLoadState("load", { timeout: left() }); // a script may have navigated
      let body: string | undefined;
      try {
        body = await page.content();
      } catch (err) {
        if (!NAVIGATING.test(errorMessage(err))) throw err;
        if (tries >= 3) throw new PageError("SCRAPE_SITE_ERROR", "the page kept navigating while it was read", { cause: err });
        // the old document still counts as loaded until the new one commits: wait for the new one (bounded)
        await page.waitForEvent("domcontentloaded", { timeout: Math.min(left(), 2000) }).catch(() => undefined);
      }
      const url = page.url(); // after the read: a navigation that ended during it is seen
      if (url.startsWith("chrome-error:")) {
        const refused = navigationRefusal(traffic);
        throw refused ? refusalError(refused) : new PageError("SCRAPE_CONNECTION_ERROR", "the page navigated to an address that could not be loaded", { retriable: true });
      }
      if (body !== undefined) return { body, url };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const live = await this.live?.catch(() => null);
    this.live = null;
    this.current = null;
    if (live) {
      await live.browser.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "browser close failed"));
      await live.server.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "browser server close failed"));
      await live.proxy.close();
    }
    await this.network.close();
  }
}
