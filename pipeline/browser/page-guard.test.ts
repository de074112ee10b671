import { describe, expect, it } from "vitest";
import type { Page, Request } from "playwright-core";
import { createLogger } from "../runtime/logger.ts";
import { fromOtherPage, isMainNavigation, PageGuard } from "./page-guard.ts";

const log = createLogger("silent");

/** What the guard reads of a request: its frame (which throws for a new window's first navigation) and its kind. */
function request(frame: (() => { page(): Page; parentFrame(): unknown }) | "throws", navigation: boolean): Request {
  return {
    frame: () => {
      if (frame === "throws") throw new Error("Frame for this navigation request is not available");
      return frame();
    },
    isNavigationRequest: () => navigation,
  } as unknown as Request;
}

describe("PageGuard", () => {
  it("a route handler that throws (or rejects) fails its page with SCRAPE_BROWSER_ERROR and the route is settled", async () => {
    for (const handler of [() => { throw new Error("boom"); }, () => Promise.reject(new Error("boom"))]) {
      const guard = new PageGuard(log, "http://site.test/");
      const settled: string[] = [];
      const wrapped = guard.route("request", handler, async (route: string) => void settled.push(route));
      await expect(wrapped("route-1")).resolves.toBeUndefined();
      expect(settled).toEqual(["route-1"]);
      await expect(guard.failed).rejects.toMatchObject({ name: "PageError", code: "SCRAPE_BROWSER_ERROR", message: "the browser's request of this page could not be handled: boom" });
    }
  });

  it("a route that cannot be settled either (its page is gone) still never throws", async () => {
    const guard = new PageGuard(log, "http://site.test/");
    const wrapped = guard.route("WebSocket", () => { throw new Error("boom"); }, () => Promise.reject(new Error("Target page, context or browser has been closed")));
    await expect(wrapped({})).resolves.toBeUndefined();
    await expect(guard.failed).rejects.toMatchObject({ code: "SCRAPE_BROWSER_ERROR" });
  });

  it("a handler that succeeds fails nothing and leaves its route alone", async () => {
    const guard = new PageGuard(log, "http://site.test/");
    let settled = 0;
    await guard.route("request", async () => undefined, async () => void settled++)("r");
    expect(settled).toBe(0);
    const outcome = await Promise.race([guard.failed.then(() => "failed", () => "failed"), new Promise((r) => setTimeout(() => r("pending"), 20))]);
    expect(outcome).toBe("pending");
  });

  it("an event listener's error (thrown or rejected) fails the page; the first error is the page's", async () => {
    const guard = new PageGuard(log, "http://site.test/");
    const listener = guard.listener("popup", (n: number) => (n === 1 ? Promise.reject(new Error("first")) : (() => { throw new Error("second"); })()));
    expect(() => listener(1)).not.toThrow();
    await expect(guard.failed).rejects.toMatchObject({ message: "the browser's popup of this page could not be handled: first" });
    expect(() => listener(2)).not.toThrow();
    await expect(guard.failed).rejects.toMatchObject({ message: /first/ });
  });

  it("after end() (the page is closing) an error fails nothing", async () => {
    const guard = new PageGuard(log, "http://site.test/");
    guard.end();
    guard.listener("popup", () => { throw new Error("late"); })();
    const outcome = await Promise.race([guard.failed.then(() => "failed", () => "failed"), new Promise((r) => setTimeout(() => r("pending"), 20))]);
    expect(outcome).toBe("pending");
  });
});

describe("fromOtherPage, isMainNavigation", () => {
  const main = {} as Page;
  const popup = {} as Page;
  it("a new window's first navigation (no frame yet) is a popup's; a frameless request that is not a navigation (a worker's) is the page's", () => {
    expect(fromOtherPage(request("throws", true), main)).toBe(true);
    expect(fromOtherPage(request("throws", false), main)).toBe(false);
    expect(isMainNavigation(request("throws", true))).toBe(false);
  });
  it("a request of another page of the context is refused; the page's own (main frame or a frame inside) are not", () => {
    expect(fromOtherPage(request(() => ({ page: () => popup, parentFrame: () => null }), false), main)).toBe(true);
    expect(fromOtherPage(request(() => ({ page: () => main, parentFrame: () => null }), true), main)).toBe(false);
    expect(isMainNavigation(request(() => ({ page: () => main, parentFrame: () => null }), true))).toBe(true);
    expect(isMainNavigation(request(() => ({ page: () => main, parentFrame: () => ({}) }), true))).toBe(false);
    expect(isMainNavigation(request(() => ({ page: () => main, parentFrame: () => null }), false))).toBe(false);
  });
});
