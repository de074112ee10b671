// SCREENSHOTS=url (the default), both modes, authentication on: the screenshot format and screenshot actions come back
// as URLs of images Trawl stores and serves under /v2 (PNG, or JPEG with a quality), readable by the owning team only,
// until their job expires (24 h after a scrape, or after a crawl's end: exactly, on Trawl's clock, which the test moves
// forward), and deleted by a later retention sweep with their job. The data-URL setting is covered by render.test.ts.
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptSite, type ScriptSite } from "../fixtures/script-site.ts";
import { MODES, startTrawl, type Instance } from "./harness.ts";
import { scrapeJobId } from "../../pipeline/runtime/constants.ts";

const DAY = 86_400_000;
const PNG = "89504e47";
const JPEG = "ffd8ff";

async function call(api: string, method: string, path: string, key?: string, body?: unknown) {
  const headers: Record<string, string> = { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) };
  return fetch(path.startsWith("http") ? path : `${api}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
}

async function image(url: string, key?: string): Promise<{ status: number; type: string | null; magic: string }> {
  const res = await call("", "GET", url, key);
  return { status: res.status, type: res.headers.get("content-type"), magic: Buffer.from(await res.arrayBuffer()).subarray(0, 4).toString("hex") };
}

describe.each(MODES)("stored screenshots (%s mode)", (mode) => {
  // Trawl's clock: the system's, moved forward by `skew` to see results expire
  let skew = 0;
  const clock = { now: () => Date.now() + skew };
  let trawl: Instance;
  let site: ScriptSite;
  let keyA: string;
  let keyB: string;
  let teamA: string;
  beforeAll(async () => {
    [site, trawl] = await Promise.all([startScriptSite(), startTrawl({ mode, render: "auto", renderConcurrency: 2, useDbAuthentication: true, authCacheTtlMs: 300 }, clock)]);
    const key = async (team: string) => (await (await call(trawl.api, "POST", "/admin/CHANGEME/keys", undefined, { team, credits: 1000 })).json()) as { key: string; teamId: string };
    const a = await key(`shots-a-${mode}`);
    [keyA, teamA, keyB] = [a.key, a.teamId, (await key(`shots-b-${mode}`)).key];
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
  });

  it("the official SDK's scrape returns screenshot URLs that serve the images to their team only, until the retention sweep", async () => {
    const firecrawl = new Firecrawl({ apiKey: keyA, apiUrl: trawl.api });
    const doc = await firecrawl.scrape(`${site.origin}/after-click`, {
      formats: ["markdown", { type: "screenshot", fullPage: true }],
      actions: [{ type: "click", selector: "#more" }, { type: "screenshot", quality: 60 }],
      timeout: 30_000,
    });
    const scrapeId = String(doc.metadata?.scrapeId);
    const shot = String(doc.screenshot);
    expect(shot).toMatch(new RegExp(`^${trawl.api}/v2/screenshots/${scrapeId}/[0-9a-f-]{36}\\.png$`));
    const jpeg = String((doc.actions as { screenshots: string[] }).screenshots[0]);
    expect(jpeg).toMatch(new RegExp(`^${trawl.api}/v2/screenshots/${scrapeId}/[0-9a-f-]{36}\\.jpeg$`));
    expect(await image(shot, keyA)).toEqual({ status: 200, type: "image/png", magic: PNG });
    expect((await image(jpeg, keyA)).type).toBe("image/jpeg");
    expect((await image(jpeg, keyA)).magic.startsWith(JPEG)).toBe(true);
    // another team, no key, a wrong extension, an unknown id
    expect((await image(shot, keyB)).status).toBe(404);
    expect((await image(shot)).status).toBe(401);
    expect((await image(shot.replace(/\.png$/, ".jpeg"), keyA)).status).toBe(404);
    expect((await image(shot.replace(/[0-9a-f-]{36}\.png$/, "00000000-0000-4000-8000-000000000000.png"), keyA)).status).toBe(404);

    // the scrape and its images answer for 24 h, and not a minute more, although they are still stored
    const id = shot.split("/").pop()?.replace(".png", "") as string;
    const scrape = async () => (await call(trawl.api, "GET", `/v2/scrape/${scrapeId}`, keyA)).status;
    skew += DAY - 60_000;
    expect(await scrape()).toBe(200);
    expect((await image(shot, keyA)).status).toBe(200);
    skew += 120_000;
    expect(await scrape()).toBe(404);
    expect((await image(shot, keyA)).status).toBe(404);
    expect((await image(jpeg, keyA)).status).toBe(404);
    expect(await trawl.running.screenshots.get(scrapeJobId(teamA, scrapeId), id)).toMatchObject({ type: "png" });
    // the sweep of a day later deletes the scrape and its images
    await trawl.running.sweepExpired(clock.now() + DAY + 3_600_000);
    await expect.poll(() => trawl.running.screenshots.get(scrapeJobId(teamA, scrapeId), id), { timeout: 20_000, interval: 300 }).toBeNull();
    expect((await image(shot, keyA)).status).toBe(404);
  });

  it("a crawl's documents carry screenshot URLs, deleted with the crawl when it expires", async () => {
    const res = await call(trawl.api, "POST", "/v2/crawl", keyA, { url: `${site.origin}/app/`, limit: 2, scrapeOptions: { formats: ["markdown", "screenshot"] } });
    const { id } = (await res.json()) as { id: string };
    let body: { status: string; data: { screenshot: string; metadata: { sourceURL: string } }[] };
    for (;;) {
      body = (await (await call(trawl.api, "GET", `/v2/crawl/${id}`, keyA)).json()) as typeof body;
      if (body.status !== "scraping") break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(body.status).toBe("completed");
    expect(body.data).toHaveLength(2);
    for (const d of body.data) {
      expect(d.screenshot, d.metadata.sourceURL).toMatch(new RegExp(`^${trawl.api}/v2/screenshots/${id}/[0-9a-f-]{36}\\.png$`));
      expect(await image(d.screenshot, keyA)).toEqual({ status: 200, type: "image/png", magic: PNG });
      expect((await image(d.screenshot, keyB)).status).toBe(404);
    }
    const first = body.data[0]?.screenshot.split("/").pop()?.replace(".png", "") as string;
    expect(await trawl.running.screenshots.get(id, first)).not.toBeNull();
    // 24 h after the crawl's end its images stop answering, before any sweep
    skew += DAY + 60_000;
    expect((await image(body.data[0]?.screenshot as string, keyA)).status).toBe(404);
    expect(await trawl.running.screenshots.get(id, first)).not.toBeNull();
    await trawl.running.sweepExpired(clock.now() + DAY + 3_600_000);
    await expect.poll(async () => trawl.running.screenshots.get(id, first), { timeout: 20_000, interval: 300 }).toBeNull();
    expect((await image(body.data[0]?.screenshot as string, keyA)).status).toBe(404);
  });
});
