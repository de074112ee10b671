// PDFs in a crawl, in both modes: parsed page by page, billed per page (so credits exceed limit), capped by
// maxPages, returned as base64 for 1 credit with parsers: [], and a PDF larger than Kafka's default message size.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePdf } from "../fixtures/pdf.ts";
import { allChunks, MODES, postJson, startTrawl, waitForEnd, type Instance } from "./harness.ts";

const manual = makePdf(["Manual page one", "Manual page two", "Manual page three"]);
const big = makePdf(["Big page one", "Big page two"], 3 * 1024 * 1024); // > 1 MB, Kafka's default message size

async function pdfSite(): Promise<{ origin: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === "/docs/") {
      res.writeHead(200, { "content-type": "text/html" }).end('<html><body><h1>Docs</h1><a href="manual.pdf">manual</a> <a href="big.pdf">big</a> <a href="octet.pdf">octet</a></body></html>');
    } else if (req.url === "/docs/manual.pdf") res.writeHead(200, { "content-type": "application/pdf" }).end(manual);
    else if (req.url === "/docs/big.pdf") res.writeHead(200, { "content-type": "application/pdf" }).end(big);
    else if (req.url === "/docs/octet.pdf") res.writeHead(200, { "content-type": "application/octet-stream" }).end(manual);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let site: { origin: string; server: Server };
  beforeAll(async () => {
    [site, trawl] = await Promise.all([pdfSite(), startTrawl({ mode })]);
  });
  afterAll(async () => {
    await trawl?.stop();
    await new Promise((r) => site?.server.close(r));
  });

  async function crawl(body: Record<string, unknown>) {
    const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, sitemap: "skip", ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const last = (await waitForEnd(trawl.api, res.body.id)).at(-1);
    const docs = (await allChunks(trawl.api, res.body.id)).flatMap((c) => c.body.data);
    const byPath = Object.fromEntries(docs.map((d: any) => [new URL(d.metadata.sourceURL).pathname, d]));
    return { last, byPath };
  }

  it("parses PDFs page by page and bills each page", async () => {
    const { last, byPath } = await crawl({ limit: 4 });
    expect(last).toMatchObject({ status: "completed", completed: 4 });
    // 1 (HTML) + 3 + 2 + 3 pages: credits exceed limit
    expect(last.creditsUsed).toBe(9);
    expect(byPath["/docs/manual.pdf"].markdown).toBe("Manual page one\n\n---\n\nManual page two\n\n---\n\nManual page three");
    expect(byPath["/docs/manual.pdf"].metadata).toMatchObject({ numPages: 3, creditsUsed: 3, contentType: "application/pdf", statusCode: 200 });
    expect(byPath["/docs/big.pdf"].markdown).toContain("Big page two");
    expect(byPath["/docs/octet.pdf"].metadata.numPages).toBe(3);
  });

  it("maxPages caps parsing and billing; parsers: [] returns base64 for 1 credit", async () => {
    const capped = await crawl({ limit: 4, scrapeOptions: { parsers: [{ type: "pdf", maxPages: 1 }] } });
    expect(capped.byPath["/docs/manual.pdf"].markdown).toBe("Manual page one");
    expect(capped.byPath["/docs/manual.pdf"].metadata).toMatchObject({ numPages: 3, creditsUsed: 1 });
    expect(capped.last.creditsUsed).toBe(4);
    const raw = await crawl({ limit: 2, scrapeOptions: { parsers: [] } });
    const pdf = Object.entries(raw.byPath).find(([p]) => p.endsWith(".pdf"))?.[1] as any;
    expect(pdf.markdown.startsWith("JVBER")).toBe(true);
    expect(Buffer.from(pdf.markdown, "base64").subarray(0, 5).toString()).toBe("%PDF-");
    expect(pdf.metadata.creditsUsed).toBe(1);
    expect(raw.last.creditsUsed).toBe(2);
  });

  it("rejects parser values the API does not know", async () => {
    for (const parsers of ["pdf", [{ pdf: true }], ["invalid-parser"]]) {
      const res = await postJson(`${trawl.api}/v2/crawl`, { url: `${site.origin}/docs/`, scrapeOptions: { parsers } });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("Bad Request");
    }
  });
});
