// The question and highlights formats (Firecrawl v2) without an LLM, in both modes: through the official JS SDK's
// scrape, and a batch whose pages go through the extract-json stage. The answer is the page's own sentence, with a
// warning that says so; each format costs 4 credits on top of the page.
import Firecrawl from "@mendable/firecrawl-js";
import { startCountingSite } from "../fixtures/counting-site.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const PAGES: Record<string, string> = {
  "/db": `<html><head><title>Connecting</title></head><body><main><h1>Connecting to the server</h1>
<p>PostgreSQL is an object-relational database system with a long history of active development.</p>
<p>The server listens on TCP port 5432 by default, and the port can be changed with the port setting.</p>
<p>Clients connect through libpq, which reads the PGHOST and PGPORT environment variables when no host is given.</p>
</main></body></html>`,
  "/shop": `<html><head><title>Shop</title></head><body><main><h1>Trail Runner 3</h1>
<p>The Trail Runner 3 weighs 280 grams and has a drop of six millimetres.</p>
<p>Shipping is free for every order over fifty euros within the European Union.</p>
</main></body></html>`,
};

const site = () => startCountingSite((path) => PAGES[path]);

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

  it("scrape through the SDK: an extractive answer and highlights with warnings, 1 + 4 + 4 credits", async () => {
    const fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
    const doc = await fc.scrape(`${s.origin}/db`, {
      formats: ["markdown", { type: "question", question: "Which port does the server listen on?" }, { type: "highlights", query: "environment variables" }],
    });
    expect(doc.answer).toBe("The server listens on TCP port 5432 by default, and the port can be changed with the port setting.");
    expect(doc.highlights).toBe("Clients connect through libpq, which reads the PGHOST and PGPORT environment variables when no host is given.");
    expect(doc.warning).toContain("no LLM is configured");
    expect(doc.metadata).toMatchObject({ creditsUsed: 9, extract: { provider: "rules", tokens: 0 } });
    expect(doc.markdown).toContain("Connecting to the server");
  });

  it("a batch: each page answered from its own text through the extract-json stage; a question nothing matches gets an empty answer", async () => {
    const started = await postJson(`${trawl.api}/v2/batch/scrape`, {
      urls: [`${s.origin}/db`, `${s.origin}/shop`], formats: [{ type: "question", question: "How much does shipping cost?" }],
    });
    await waitForEnd(trawl.api, started.body.id, 60_000, "batch/scrape");
    const chunks = await allChunks(trawl.api, started.body.id, "", "batch/scrape");
    const docs = chunks.flatMap((c) => c.body.data) as { metadata: { sourceURL: string; creditsUsed: number }; answer: string; warning: string; markdown?: string }[];
    const byPath = Object.fromEntries(docs.map((d) => [new URL(d.metadata.sourceURL).pathname, d]));
    expect(byPath["/shop"]?.answer).toBe("Shipping is free for every order over fifty euros within the European Union.");
    expect(byPath["/db"]?.answer).toBe("");
    expect(byPath["/db"]?.warning).toContain("no sentence of the page matches");
    expect(docs.map((d) => d.metadata.creditsUsed)).toEqual([5, 5]);
    expect(docs.every((d) => d.markdown === undefined)).toBe(true);
    expect(chunks[0]?.body.creditsUsed).toBe(10);
  });

  it("refusals name the field: question without question, highlights without query, query on another format", async () => {
    const url = `${s.origin}/db`;
    const cases: [unknown, (string | number)[]][] = [
      [[{ type: "question" }], ["formats", 0, "question"]],
      [[{ type: "highlights", query: "  " }], ["formats", 0, "query"]],
      [[{ type: "markdown", query: "x" }], ["formats", 0, "query"]],
      [[{ type: "question", question: "a?" }, { type: "question", question: "b?" }], ["formats", 1]],
    ];
    for (const [formats, path] of cases) {
      const res = await postJson(`${trawl.api}/v2/scrape`, { url, formats });
      expect(res.status, JSON.stringify(formats)).toBe(400);
      expect(res.body.details[0].path).toEqual(path);
    }
  });
});
