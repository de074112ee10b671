// POST /v2/parse (Firecrawl v2) in both modes: HTML, DOCX and PDF uploads through the official JS SDK's parse, with
// formats as on a scrape and billing as a scrape; every bad upload is a 4xx naming the problem, never a 500.
import Firecrawl from "@mendable/firecrawl-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docxBomb, makeDocx } from "../fixtures/docx.ts";
import { makePdf } from "../fixtures/pdf.ts";
import { getJson, MODES, startTrawl, type Instance } from "./harness.ts";

const HTML = `<html><head><title>Local page</title></head><body><nav><a href="/x">Menu</a></nav><main><h1>Private notes</h1>
<p>The quarterly figures are attached below and were approved by the board in March.</p><a href="other.html">Other</a> <a href="https://example.com/docs/">Docs</a></main></body></html>`;

async function upload(api: string, parts: { file?: { bytes: Buffer; name: string; type?: string }; options?: string }): Promise<{ status: number; body: any }> {
  const form = new FormData();
  if (parts.options !== undefined) form.append("options", parts.options);
  if (parts.file) form.append("file", new Blob([parts.file.bytes], parts.file.type ? { type: parts.file.type } : {}), parts.file.name);
  const res = await fetch(`${api}/v2/parse`, { method: "POST", body: form });
  return { status: res.status, body: await res.json() };
}

describe.each(MODES)("%s mode", (mode) => {
  let trawl: Instance;
  let fc: Firecrawl;
  beforeAll(async () => {
    trawl = await startTrawl({ mode, parseMaxBytes: 1_000_000 });
    fc = new Firecrawl({ apiKey: "fc-test", apiUrl: trawl.api });
  });
  afterAll(async () => {
    await trawl?.stop();
  });

  it("HTML through the SDK: formats as a scrape (main content, links, json without an LLM), sourceFile named", async () => {
    const doc = await fc.parse({ data: Buffer.from(HTML), filename: "notes.html", contentType: "text/html" }, {
      formats: ["markdown", "links", { type: "json", schema: { type: "object", properties: { title: { type: "string" } } } }],
    });
    expect(doc.markdown).toContain("# Private notes");
    expect(doc.markdown).not.toContain("Menu");
    expect(doc.links).toEqual(["https://example.com/docs/"]); // a relative link has no base to resolve against
    expect(doc.json).toEqual({ title: "Private notes" }); // the rules provider reads the page's heading
    expect(doc.metadata).toMatchObject({ sourceFile: "notes.html", title: "Local page", creditsUsed: 5 });
  });

  it("DOCX through the SDK: headings, paragraphs and a table as markdown; PDF billed per page", async () => {
    const docx = makeDocx([{ heading: "Annual report" }, { para: "Revenue grew by a third this year." }, { table: [["Year", "Revenue"], ["2026", "12"]] }]);
    const doc = await fc.parse({ data: docx, filename: "report.docx" });
    expect(doc.markdown).toContain("# Annual report");
    expect(doc.markdown).toContain("Revenue grew by a third this year.");
    expect(doc.markdown).toMatch(/\| Year \| Revenue \|\n\| --- \| --- \|\n\| 2026 \| 12 \|/);
    expect(doc.metadata).toMatchObject({ sourceFile: "report.docx", creditsUsed: 1 });
    const before = (await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data.creditsUsed;
    const pdf = await fc.parse({ data: makePdf(["First page text", "Second page text", "Third page text"]), filename: "scan.pdf" });
    expect(pdf.markdown).toContain("Second page text");
    expect(pdf.metadata).toMatchObject({ numPages: 3, creditsUsed: 3, sourceFile: "scan.pdf" });
    expect((await getJson(`${trawl.api}/v2/team/credit-usage`)).body.data.creditsUsed).toBe(before + 3);
  });

  it("bad uploads: 400 / 413 / 415 with the problem named, never 500", async () => {
    const html = { bytes: Buffer.from(HTML), name: "a.html" };
    const cases: [Parameters<typeof upload>[1], number, string][] = [
      [{ options: "{}" }, 400, "file"],
      [{ file: html, options: "{not json" }, 400, "BAD_REQUEST_INVALID_JSON"],
      [{ file: html, options: JSON.stringify({ waitFor: 1000 }) }, 400, "PARSE_UNSUPPORTED_OPTIONS"],
      [{ file: html, options: JSON.stringify({ formats: ["screenshot"] }) }, 400, "PARSE_UNSUPPORTED_OPTIONS"],
      [{ file: html, options: JSON.stringify({ formats: ["nonsense"] }) }, 400, "formats"],
      [{ file: { bytes: Buffer.from("PK not really"), name: "sheet.xlsx" } }, 415, "SCRAPE_UNSUPPORTED_FILE_ERROR"],
      [{ file: { bytes: Buffer.from("\x00\x01binary"), name: "blob", type: "application/octet-stream" } }, 415, "SCRAPE_UNSUPPORTED_FILE_ERROR"],
      [{ file: { bytes: Buffer.from("not a zip at all"), name: "broken.docx" } }, 400, "not a DOCX"],
      [{ file: { bytes: docxBomb(200), name: "bomb.docx" } }, 400, "inflates to more than"],
      [{ file: { bytes: Buffer.from("%PDF-1.4 garbage"), name: "broken.pdf" } }, 400, "broken.pdf"],
      [{ file: { bytes: Buffer.alloc(1_100_000, 0x61), name: "big.html" } }, 413, "PARSE_MAX_BYTES"],
    ];
    for (const [parts, status, says] of cases) {
      const res = await upload(trawl.api, parts);
      expect(res.status, `${JSON.stringify(res.body)}`).toBe(status);
      expect(JSON.stringify(res.body)).toContain(says);
    }
    const json = await fetch(`${trawl.api}/v2/parse`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(json.status).toBe(415);
  });
});
