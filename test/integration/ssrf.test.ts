// The private-address rule in both modes, with private targets and local webhooks off: IPv4-mapped IPv6 literals
// (both spellings) and the other IPv6 forms of 127.0.0.1 are refused at submit; host names that resolve to them are
// refused at connect time, for pages and for webhooks. Nothing reaches the loopback servers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFixtureSite, type FixtureSite } from "../fixtures/site.ts";
import { startReceiver, type Receiver } from "../fixtures/webhook-receiver.ts";
import { getJson, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const LOOPBACK_FORMS = ["[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "127.0.0.1", "[::1]", "localhost"];

async function until(what: string, cond: () => Promise<boolean>, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: FixtureSite;
  let receiver: Receiver;
  let sitePort = "";
  let hookPort = "";
  beforeAll(async () => {
    [site, receiver] = await Promise.all([startFixtureSite(), startReceiver("s")]);
    sitePort = new URL(site.origin).port;
    hookPort = new URL(receiver.url).port;
    trawl = await startTrawl({
      mode, allowPrivateCrawlTargets: false, allowLocalWebhooks: false, webhookSecret: "s", webhookRetryDelaysMs: [100],
      // names whose address is an IPv4-mapped loopback address, as a hostile DNS server could answer
      resolve: { "mapped.test": "::ffff:127.0.0.1", "hook.test": "::ffff:7f00:1" },
    });
  });
  afterAll(async () => {
    await trawl?.stop();
    await site?.close();
    await receiver?.close();
  });

  it("refuses scrape and crawl of loopback written as any IPv6 literal with 400", async () => {
    for (const host of LOOPBACK_FORMS) {
      const url = `http://${host}:${sitePort}/docs/`;
      for (const path of ["/v2/scrape", "/v2/crawl"]) {
        const res = await postJson(`${trawl.api}${path}`, { url });
        expect(res.status, `${path} ${url}`).toBe(400);
        expect(res.body).toMatchObject({ success: false, code: "BAD_REQUEST", details: [{ path: ["url"] }] });
      }
    }
    expect(site.hits.size).toBe(0);
  });

  it("refuses webhooks to those addresses at submit with 400, as a string or an object", async () => {
    for (const host of LOOPBACK_FORMS) {
      const hook = `http://${host}:${hookPort}/hook`;
      for (const webhook of [hook, { url: hook, events: ["completed"] }]) {
        const res = await postJson(`${trawl.api}/v2/crawl`, { url: "https://example.com/", limit: 1, webhook });
        expect(res.status, JSON.stringify(webhook)).toBe(400);
        expect(res.body.details[0].path[0]).toBe("webhook");
        expect(res.body.error).toContain("ALLOW_LOCAL_WEBHOOKS");
      }
    }
  });

  it("refuses at connect time a host name resolving to ::ffff:127.0.0.1, for the page and for the webhook", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `http://mapped.test:${sitePort}/docs/`, limit: 3, webhook: `http://hook.test:${hookPort}/hook` });
    expect(res.status).toBe(200);
    const seen = await waitForEnd(trawl.api, res.body.id);
    expect(seen.at(-1).status).toBe("failed");
    const errors = await getJson(`${trawl.api}/v2/crawl/${res.body.id}/errors`);
    expect(errors.body.errors.map((e: { code: string }) => e.code)).toContain("SCRAPE_PRIVATE_TARGET_REFUSED");
    await until("the refused deliveries in the log", async () => {
      const log = await trawl.running.store.listDeliveries(res.body.id);
      return log.filter((d) => d.attempt === 1 && d.error.startsWith("refused")).length >= 2;
    });
    expect(site.hits.size).toBe(0);
    expect(receiver.requests).toBe(0);
  });
});
