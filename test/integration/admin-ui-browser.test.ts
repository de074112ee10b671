// The queue admin UI in a real browser (Debian's Chromium, headless, through playwright-core): opened during a crawl,
// it shows every stage's topic with its consumer lag and the running crawl. On failure a screenshot is saved under
// test-results/ and its path is printed with the error.
import { mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, postJson, startTrawl, type Instance } from "./harness.ts";

const CHROMIUM = "/usr/bin/chromium";
const PAGES = 30;

/** PAGES linked pages, each answered after 300 ms, so a crawl at one page at a time runs for several seconds. */
async function startSlowSite(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    const m = /^\/p(\d+)$/.exec(req.url ?? "");
    if (req.url !== "/" && !m) {
      res.writeHead(404).end();
      return;
    }
    setTimeout(() => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end(`<html><body>${Array.from({ length: PAGES }, (_, i) => `<a href="/p${i}">p${i}</a>`).join(" ")}</body></html>`);
    }, 300);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: { origin: string; server: Server };
  let browser: Browser;

  beforeAll(async () => {
    site = await startSlowSite();
    trawl = await startTrawl({ mode, adminKey: "admin-test-key" });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox"] });
  });
  afterAll(async () => {
    await browser?.close();
    await trawl?.stop();
    site?.server.close();
  });

  it("shows each stage's lag and the running crawl during a crawl", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/`, limit: PAGES, maxConcurrency: 1 });
    expect(res.status).toBe(200);
    const id = res.body.id as string;
    const page = await browser.newPage();
    try {
      // the crawl is running: wait until it has fetched a page, so every stage has seen work
      await expect.poll(async () => {
        await page.goto(`${trawl.api}/admin/admin-test-key/queues`);
        return page.locator("h2:has-text('Running crawls') + table").innerText();
      }, { timeout: 30_000 }).toMatch(new RegExp(`${id}[\\s\\S]*?[1-9]\\d*/\\d+`));
      const queues = await page.locator("table").first().locator("tr").allInnerTexts();
      for (const topic of ["frontier.inbox", "fetch.tasks", "pages.fetched", "crawl.pages", "crawl.events", "webhook.deliveries"]) {
        const row = queues.find((r) => r.startsWith(topic));
        expect(row, `${topic} row in ${JSON.stringify(queues)}`).toBeDefined();
        expect(row!.trim().split(/\t/).at(-1), `${topic} lag`).toMatch(/^\d+$/);
      }
      const crawls = await page.locator("h2:has-text('Running crawls') + table").locator("tr").allInnerTexts();
      const row = crawls.find((r) => r.includes(id));
      expect(row).toContain(`${site.origin}/`);
      expect(await page.title()).toBe("Trawl queues");
    } catch (err) {
      mkdirSync("test-results", { recursive: true });
      const shot = `test-results/admin-ui-${mode}-${Date.now()}.png`;
      await page.screenshot({ path: shot, fullPage: true }).catch(() => undefined);
      (err as Error).message += `\nscreenshot: ${shot}`;
      throw err;
    } finally {
      await page.close();
      await fetch(`${trawl.api}/v2/crawl/${id}`, { method: "DELETE" });
    }
  });
});
