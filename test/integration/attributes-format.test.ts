// The attributes format (Firecrawl v2) in both modes: through the official JS SDK's scrape, and a crawl whose pages
// go through the convert stage (worker pool, Kafka topics in cluster mode); a bad selector is a 400 naming it.
import Firecrawl from "@mendable/firecrawl-js";
import { startCountingSite } from "../fixtures/counting-site.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const page = (n: number) => `<html><head><title>p${n}</title></head><body><nav><a href="/p/${n === 3 ? 1 : n + 1}" data-nav="${n}">next</a></nav>
<main><article><h1>Page ${n}</h1><p>Text of page ${n}, long enough to be main content.</p>
<ul>${[1, 2].map((i) => `<li class="item" data-sku="${n}-${i}"><img src="/i/${n}-${i}.png" alt="item ${n}-${i}"></li>`).join("")}</ul></article></main></body></html>`;

const site = () => startCountingSite((path) => {
  const n = Number(/^\/p\/(\d)$/.exec(path)?.[1]);
  return n ? page(n) : undefined;
});

const selectors = [{ selector: "li.item", attribute: "data-sku" }, { selector: "main img", attribute: "alt" }, { selector: "nav > a", attribute: "data-nav" }];

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let s: Awaited<ReturnType<typeof site>>;
  beforeAll(async () => {
    [s, trawl] = await Promise.all([site(), startTrawl({ mode })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await s?.close();
  });

  it("scrape through the SDK: values per selector in document order, from the whole page", async () => {
    const fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
    const doc = await fc.scrape(`${s.origin}/p/1`, { formats: ["markdown", { type: "attributes", selectors }] });
    expect(doc.attributes).toEqual([
      { ...selectors[0], values: ["1-1", "1-2"] },
      { ...selectors[1], values: ["item 1-1", "item 1-2"] },
      { ...selectors[2], values: ["1"] },
    ]);
    expect(doc.markdown).toContain("Page 1");
  });

  it("a crawl: every page carries its own values", async () => {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${s.origin}/p/1`, limit: 10, crawlEntireDomain: true, scrapeOptions: { formats: [{ type: "attributes", selectors: [selectors[0]] }] } });
    await waitForEnd(trawl.api, res.body.id);
    const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data) as { metadata: { sourceURL: string }; attributes: { values: string[] }[]; markdown?: string }[];
    const byPath = Object.fromEntries(docs.map((d) => [new URL(d.metadata.sourceURL).pathname, d.attributes[0]?.values]));
    expect(byPath).toEqual({ "/p/1": ["1-1", "1-2"], "/p/2": ["2-1", "2-2"], "/p/3": ["3-1", "3-2"] });
    expect(docs.every((d) => d.markdown === undefined)).toBe(true);
  });

  it("refusals name the field: a selector the engine cannot read, no selectors, selectors on another format", async () => {
    const url = `${s.origin}/p/1`;
    const cases: [unknown, (string | number)[]][] = [
      [[{ type: "attributes", selectors: [{ selector: "li:first-child", attribute: "x" }] }], ["formats", 0, "selectors", 0, "selector"]],
      [[{ type: "attributes" }], ["formats", 0, "selectors"]],
      [[{ type: "markdown", selectors }], ["formats", 0, "selectors"]],
    ];
    for (const [formats, path] of cases) {
      const res = await postJson(`${trawl.api}/v2/scrape`, { url, formats });
      expect(res.status, JSON.stringify(formats)).toBe(400);
      expect(res.body.details[0].path).toEqual(path);
    }
  });
});
