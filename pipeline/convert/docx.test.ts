import { describe, expect, it } from "vitest";
import { docxBomb, makeDocx, makeZip } from "../../test/fixtures/docx.ts";
import { checkZip, DocxError, docxToHtml } from "./docx.ts";

describe("docxToHtml", () => {
  it("headings, paragraphs and tables become semantic HTML", async () => {
    const { html } = await docxToHtml(makeDocx([{ heading: "Annual report" }, { para: "Revenue grew." }, { table: [["Year", "Revenue"], ["2026", "12"]] }]));
    expect(html).toContain("<h1>Annual report</h1>");
    expect(html).toContain("<p>Revenue grew.</p>");
    expect(html).toMatch(/<table>.*<td><p>2026<\/p><\/td>.*<\/table>/s);
  });

  it("refuses what is not a DOCX, and a zip that inflates past the budget, before mammoth reads it", async () => {
    await expect(docxToHtml(Buffer.from("just text, not a zip"))).rejects.toThrow(DocxError);
    await expect(docxToHtml(makeZip({ "a.txt": "hello" }))).rejects.toThrow(/not a readable DOCX/);
    const bomb = docxBomb(64);
    expect(bomb.length).toBeLessThan(200_000);
    await expect(checkZip(bomb, 32 * 1024 * 1024)).rejects.toThrow(/inflates to more than/);
    await expect(checkZip(makeZip({ "a.txt": "x".repeat(1000) }, true), 100)).rejects.toThrow(/inflates to more than/);
    await expect(checkZip(makeZip({ "a.txt": "x".repeat(1000) }), 2000)).resolves.toBeUndefined();
  });
});
