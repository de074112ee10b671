// The Renderer on Debian's Chromium through playwright-core (no browser download: the system binary). One browser
// process, at most `concurrency` pages at once, one fresh context per page (no cookies, storage or cache shared
// between pages), downloads refused, every request through BrowserNetwork. A crashed or hung browser is replaced
// and the page tried once more on the new one.
import { existsSync } from "node:fs";
import { chromium, devices, type Browser, type BrowserServer, type Page } from "playwright-core";
import { errorCode, errorMessage, PageError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";
import { AD_HOST, BrowserNetwork, PageTraffic } from "./browser-network.ts";
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
];

const DESKTOP = { viewport: { width: 1920, height: 1080 } };
const MOBILE = devices["Pixel 7"] as (typeof devices)[string];

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
    const rules = Object.entries(this.opts.resolve ?? {}).map(([host, address]) => `MAP ${host} ${address}`);
    // no --proxy-server: Chromium would send its own background traffic (component updates, account checks) through
    // it; the pages' HTTP requests are made by BrowserNetwork, through the proxy (WebSockets connect directly)
    const server = await chromium.launchServer({
      executablePath: this.opts.executablePath, headless: true, chromiumSandbox: false,
      args: [...LAUNCH_FLAGS, ...(rules.length ? [`--host-resolver-rules=${rules.join(",")}`] : [])],
    });
    const browser = await chromium.connect(server.wsEndpoint());
    this.launches++;
    if (this.launches > 1) this.opts.metrics?.browserRestarts.inc();
    const live: Live = { server, browser };
    this.current = live;
    server.process().once("exit", (code, signal) => {
      if (this.live && !this.closed) this.log.warn({ code, signal }, "Chromium exited: a new one starts with the next page");
      this.forget(live);
    });
    browser.once("disconnected", () => this.forget(live));
    this.log.info({ pid: server.process().pid, ms: Date.now() - started }, "Chromium started");
    return live;
  }

  /** The next page launches a new browser (when `live` is still the current one). */
  private forget(live: Live): void {
    if (this.current !== live) return;
    this.current = null;
    this.live = null;
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
    const device = req.mobile ? MOBILE : { ...DESKTOP, userAgent: this.opts.userAgent };
    let context;
    try {
      context = await live.browser.newContext({
        ...device, acceptDownloads: false, serviceWorkers: "block", ignoreHTTPSErrors: req.skipTlsVerification ?? true,
        ...(req.headers ? { extraHTTPHeaders: req.headers } : {}),
      });
    } catch (err) {
      throw gone(live, err) ? this.lost(live, err) : err;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      let doc = req.document;
      const ads = req.blockAds !== false ? this.opts.adHosts : undefined;
      await context.route("**/*", (route) => {
        const request = route.request();
        if (doc && request.isNavigationRequest() && request.url() === doc.finalUrl) {
          const { statusCode, contentType, body } = doc;
          doc = undefined; // only the first navigation: a reload or a later visit goes to the site
          return route.fulfill({ status: statusCode, contentType: /charset/i.test(contentType) ? contentType : `${contentType}; charset=utf-8`, body });
        }
        // the page itself is never an "ad": only what it loads (subresources, frames) is checked against the list
        const blocked = ads && !(request.isNavigationRequest() && request.frame().parentFrame() === null) ? (host: string) => ads.blocks(host) : undefined;
        return this.network.fulfil(route, traffic, req.skipTlsVerification ?? true, abort.signal, blocked).catch((err: unknown) => {
          this.log.debug({ url: request.url(), err: errorMessage(err) }, "browser request not completed");
        });
      });
      await context.routeWebSocket(/.*/, (ws) => this.network.webSocket(ws, traffic));
      const page = await context.newPage();
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PageError("SCRAPE_TIMEOUT", `the page was not rendered within ${req.timeoutMs} ms`, { retriable: true })), req.timeoutMs);
      });
      return await Promise.race([this.load(page, req, deadline, traffic), timedOut]);
    } catch (err) {
      abort.abort();
      if (gone(live, err)) throw this.lost(live, err);
      if (err instanceof PageError && err.code === "SCRAPE_TIMEOUT" && (await this.replaceIfHung(live))) throw new BrowserLost("hung");
      throw err;
    } finally {
      clearTimeout(timer);
      abort.abort();
      await context.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "context close failed (browser gone)"));
    }
  }

  private async load(page: Page, req: RenderRequest, deadline: number, traffic: PageTraffic): Promise<RenderResult> {
    const left = () => Math.max(1, deadline - Date.now());
    let response;
    try {
      response = await page.goto(req.document?.finalUrl ?? req.url, { waitUntil: "load", timeout: left() });
    } catch (err) {
      const refused = traffic.refused.find((r) => r.url === req.url || /private address/.test(r.reason));
      if (refused && /ERR_BLOCKED_BY_CLIENT/.test(errorMessage(err))) {
        throw new PageError("SCRAPE_PRIVATE_TARGET_REFUSED", `refused: ${refused.reason} (set ALLOW_PRIVATE_CRAWL_TARGETS=true to allow)`);
      }
      if (/closed|crash/i.test(errorMessage(err))) throw err; // the browser went away: the caller decides
      throw new PageError(/Timeout/.test(errorMessage(err)) ? "SCRAPE_TIMEOUT" : "SCRAPE_CONNECTION_ERROR", `browser navigation failed: ${errorMessage(err).split("\n")[0]}`, { retriable: true, cause: err });
    }
    // scripts that fetch their content after load: wait until the network is quiet (bounded)
    await page.waitForLoadState("networkidle", { timeout: Math.min(left(), 3000) }).catch((err: unknown) => this.log.debug({ url: req.url, err: errorMessage(err) }, "network not idle; going on"));
    if (req.waitForMs) await page.waitForTimeout(Math.min(req.waitForMs, left()));
    const actions = req.actions?.length ? await runActions(page, req.actions, deadline) : undefined;
    await page.waitForLoadState("load", { timeout: left() }); // a script may have navigated
    const body = await page.content();
    if (Buffer.byteLength(body) > this.opts.maxBytes) throw new PageError("SCRAPE_TOO_LARGE", `rendered page larger than ${this.opts.maxBytes} bytes`);
    const screenshot = req.screenshot ? await screenshotOf(page, req.screenshot) : undefined;
    const contentType = (response?.headers()["content-type"] ?? "text/html").split(";")[0]?.trim() ?? "text/html";
    const adsBlocked = traffic.refused.filter((r) => r.reason === AD_HOST).length;
    for (const r of traffic.refused) this.opts.metrics?.renderRefused.inc({ reason: r.reason === AD_HOST ? "ad" : /private address/.test(r.reason) ? "private" : "other" });
    this.log.debug({ url: req.url, requests: traffic.requests, refused: traffic.refused.length, adsBlocked, bytes: traffic.bytes }, "page rendered");
    return {
      url: req.url, finalUrl: page.url(), statusCode: response?.status() ?? 200, contentType, body,
      ...(screenshot ? { screenshot } : {}), ...(actions ? { actions } : {}),
      ...(traffic.refused.length ? { refused: traffic.refused } : {}),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const live = await this.live?.catch(() => null);
    this.live = null;
    this.current = null;
    if (live) {
      await live.browser.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "browser close failed"));
      await live.server.close().catch((err: unknown) => this.log.debug({ err: errorMessage(err) }, "browser server close failed"));
    }
    await this.network.close();
  }
}
