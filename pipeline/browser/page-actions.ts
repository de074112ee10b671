// Firecrawl's actions on a loaded page, in order; their results (screenshots, scrapes, script returns, PDFs) are
// collected as Firecrawl's `actions` object. Screenshots and PDFs are data URLs.
import type { Page } from "playwright-core";
import { PageError } from "../runtime/errors.ts";
import type { ActionResults, RenderAction, ScreenshotSpec } from "./renderer.ts";

export async function screenshotOf(page: Page, spec: ScreenshotSpec): Promise<string> {
  if (spec.viewport) await page.setViewportSize(spec.viewport);
  const jpeg = spec.quality !== undefined;
  const bytes = await page.screenshot({ fullPage: spec.fullPage ?? false, type: jpeg ? "jpeg" : "png", ...(jpeg ? { quality: spec.quality } : {}) });
  return `data:image/${jpeg ? "jpeg" : "png"};base64,${bytes.toString("base64")}`;
}

/** Runs a user script: as an expression, or as a function body when it uses `return` (or awaits). */
async function runScript(page: Page, script: string): Promise<unknown> {
  try {
    return await page.evaluate(script);
  } catch (err) {
    if (!/SyntaxError|Illegal return/i.test(String(err))) throw err;
    return await page.evaluate(`(async () => { ${script}\n})()`);
  }
}

const typeOf = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

export async function runActions(page: Page, actions: RenderAction[], deadline: number): Promise<ActionResults> {
  const out: ActionResults = { screenshots: [], scrapes: [], javascriptReturns: [], pdfs: [] };
  const left = () => Math.max(1, deadline - Date.now());
  for (const [i, action] of actions.entries()) {
    try {
      switch (action.type) {
        case "wait":
          if (action.selector) await page.waitForSelector(action.selector, { state: "attached", timeout: left() });
          else await page.waitForTimeout(Math.min(action.milliseconds ?? 0, left()));
          break;
        case "click": {
          const target = page.locator(action.selector);
          if (action.all) {
            for (const one of await target.all()) await one.click({ timeout: left() });
          } else {
            await target.first().click({ timeout: left() });
          }
          break;
        }
        case "write":
          await page.keyboard.type(action.text);
          break;
        case "press":
          await page.keyboard.press(action.key);
          break;
        case "scroll": {
          const sign = action.direction === "up" ? -1 : 1;
          if (action.selector) {
            await page.locator(action.selector).first().evaluate((el, s) => el.scrollBy(0, s * el.clientHeight), sign, { timeout: left() });
          } else {
            await page.evaluate(`window.scrollBy(0, ${sign} * window.innerHeight)`);
          }
          break;
        }
        case "screenshot":
          out.screenshots.push(await screenshotOf(page, action));
          break;
        case "scrape":
          out.scrapes.push({ url: page.url(), html: await page.content() });
          break;
        case "executeJavascript": {
          const value = await runScript(page, action.script);
          out.javascriptReturns.push({ type: typeOf(value), value: value === undefined ? null : value });
          break;
        }
        case "pdf": {
          const bytes = await page.pdf({ landscape: action.landscape ?? false, scale: action.scale ?? 1, format: action.format ?? "Letter" });
          out.pdfs.push(`data:application/pdf;base64,${bytes.toString("base64")}`);
          break;
        }
      }
    } catch (err) {
      if (err instanceof PageError) throw err;
      throw new PageError("SCRAPE_ACTION_ERROR", `action ${i} (${action.type}) failed: ${String((err as Error).message ?? err).split("\n")[0]}`, { cause: err });
    }
  }
  return out;
}
