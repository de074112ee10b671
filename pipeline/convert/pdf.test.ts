import { describe, expect, it } from "vitest";
import { makePdf } from "../../test/fixtures/pdf.ts";
import { pdfToMarkdown } from "./pdf.ts";

describe("pdfToMarkdown", () => {
  it("extracts the text of every page and counts them", async () => {
    const out = await pdfToMarkdown(makePdf(["First page text", "Second (page) text", "Third"]));
    expect(out.numPages).toBe(3);
    expect(out.parsedPages).toBe(3);
    expect(out.markdown).toBe("First page text\n\n---\n\nSecond (page) text\n\n---\n\nThird");
  });
  it("stops at maxPages", async () => {
    const out = await pdfToMarkdown(makePdf(["a", "b", "c", "d"]), 2);
    expect(out).toMatchObject({ numPages: 4, parsedPages: 2, markdown: "a\n\n---\n\nb" });
  });
  it("rejects what is not a PDF", async () => {
    await expect(pdfToMarkdown(new TextEncoder().encode("<html>not a pdf</html>"))).rejects.toThrow();
  });
});
