// One page's guard over what Playwright calls back while the page renders (route handlers, event listeners). An
// exception thrown into Playwright from one of them is an uncaught error or an unhandled rejection, which ends the
// whole process (issue 50: `request.frame()` throws for a popup's first request, and a page that called window.open()
// took the process down on every restart). A guarded callback never throws: its error fails its own page
// (SCRAPE_BROWSER_ERROR, raced against the rendering), and a route it did not answer is aborted, so the request does
// not hang until the page's time-out. The guard also says which requests are not the page's own: a popup's.
import type { Page, Request } from "playwright-core";
import { errorMessage, PageError } from "../runtime/errors.ts";
import type { Logger } from "../runtime/logger.ts";

export class PageGuard {
  private readonly log: Logger;
  private readonly url: string;
  private error: PageError | undefined;
  private ended = false;
  private rejectFailed: (err: PageError) => void = () => undefined;
  /** Rejects with the first error of a guarded callback of the page (raced against the rendering). */
  readonly failed: Promise<never>;

  constructor(log: Logger, url: string) {
    this.log = log;
    this.url = url;
    this.failed = new Promise<never>((_, reject) => {
      this.rejectFailed = reject;
    });
    this.failed.catch(() => undefined); // raced by the renderer; never an unhandled rejection on its own
  }

  /** The first error fails the page; after end() (the page is being closed) errors are only logged. */
  fail(where: string, err: unknown): void {
    if (this.ended || this.error) {
      this.log.debug({ url: this.url, where, err: errorMessage(err) }, "browser callback failed after the page's outcome");
      return;
    }
    this.log.warn({ url: this.url, where, err: errorMessage(err) }, "browser callback failed: the page fails");
    this.error = new PageError("SCRAPE_BROWSER_ERROR", `the browser's ${where} of this page could not be handled: ${errorMessage(err).split("\n")[0]}`, { cause: err });
    this.rejectFailed(this.error);
  }

  /**
   * A route handler (page requests, WebSockets) that never throws: the handler's error fails the page and `settle`
   * answers the route (abort, close), so that it does not hang.
   */
  route<R>(where: string, handler: (route: R) => unknown, settle: (route: R) => Promise<unknown>): (route: R) => Promise<void> {
    return async (route: R) => {
      try {
        await handler(route);
      } catch (err) {
        this.fail(where, err);
        await settle(route).catch((e: unknown) => this.log.debug({ url: this.url, where, err: errorMessage(e) }, "route already answered, or its page is gone"));
      }
    };
  }

  /** An event listener that never throws: its error (thrown or rejected) fails the page. */
  listener<A extends unknown[]>(where: string, fn: (...args: A) => unknown): (...args: A) => void {
    return (...args: A) => {
      try {
        const out = fn(...args);
        if (out instanceof Promise) out.catch((err: unknown) => this.fail(where, err));
      } catch (err) {
        this.fail(where, err);
      }
    };
  }

  /** The page's outcome is decided: later callback errors (a route answered while its context closes) fail nothing. */
  end(): void {
    this.ended = true;
  }
}

/**
 * Whether a request is not `main`'s own: a popup's (window.open, target=_blank, a form aimed at a new window). A new
 * window's first navigation comes before Playwright knows its page, and `request.frame()` throws for it: that throw
 * is the answer. A request without a frame that is not a navigation (a worker's) belongs to the page.
 */
export function fromOtherPage(request: Request, main: Page): boolean {
  let page: Page;
  try {
    page = request.frame().page();
  } catch {
    return request.isNavigationRequest();
  }
  return page !== main;
}

/** Whether a request is the navigation of the page's main frame (the page itself, never an "ad"). */
export function isMainNavigation(request: Request): boolean {
  if (!request.isNavigationRequest()) return false;
  try {
    return request.frame().parentFrame() === null;
  } catch {
    return false;
  }
}
