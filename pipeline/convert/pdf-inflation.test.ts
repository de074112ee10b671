import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { deflatedZeros, makePdf, pdfWithFlateContent } from "../../test/fixtures/pdf.ts";
import { checkPdfInflation, PdfTooLargeError } from "./pdf-inflation.ts";
import { pdfToMarkdown } from "./pdf.ts";

describe("PDF decompression bombs", () => {
  it("a PDF whose content stream inflates past the cap fails with SCRAPE_TOO_LARGE before pdfjs parses it", async () => {
    // 16 MiB against a 4 MiB cap here (the default cap, 128 MiB, is exercised by test/integration/bombs.test.ts)
    const bomb = pdfWithFlateContent(await deflatedZeros(16));
    expect(bomb.length).toBeLessThan(20_000);
    await expect(pdfToMarkdown(new Uint8Array(bomb), undefined, 4 << 20)).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
    expect((await pdfToMarkdown(new Uint8Array(bomb), undefined, 32 << 20)).numPages).toBe(1);
  }, 30_000);

  it("counts nested Flate layers, and passes ordinary PDFs", async () => {
    const nested = pdfWithFlateContent(deflateSync(await deflatedZeros(16)), "[/FlateDecode /FlateDecode]");
    await expect(checkPdfInflation(nested, 1 << 20)).rejects.toBeInstanceOf(PdfTooLargeError);
    await expect(checkPdfInflation(nested, 32 << 20)).resolves.toBeUndefined();
    const text = pdfWithFlateContent(deflateSync("BT /F1 18 Tf 72 720 Td (Hello) Tj ET"));
    await expect(checkPdfInflation(text, 1024)).resolves.toBeUndefined();
    await expect(checkPdfInflation(new Uint8Array(makePdf(["Page one"], 100_000)), 1024)).resolves.toBeUndefined();
  }, 30_000);
});
