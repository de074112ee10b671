import { deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { deflatedZeros, makePdf, pdfWithFlateContent } from "../../test/fixtures/pdf.ts";
import { checkPdfInflation, PdfTooLargeError } from "./pdf-inflation.ts";
import { pdfToMarkdown } from "./pdf.ts";

describe("PDF decompression bombs", () => {
  it("a ~150 KB PDF whose content stream inflates to 160 MiB fails with SCRAPE_TOO_LARGE, fast and bounded", async () => {
    const bomb = pdfWithFlateContent(await deflatedZeros(160));
    expect(bomb.length).toBeLessThan(200_000);
    const rss0 = process.memoryUsage().rss;
    await expect(pdfToMarkdown(new Uint8Array(bomb))).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
    expect((process.memoryUsage().rss - rss0) / 1e6).toBeLessThan(100);
  }, 60_000);

  it("counts nested Flate layers, and passes ordinary PDFs", async () => {
    const nested = pdfWithFlateContent(deflateSync(await deflatedZeros(16)), "[/FlateDecode /FlateDecode]");
    await expect(checkPdfInflation(nested, 1 << 20)).rejects.toBeInstanceOf(PdfTooLargeError);
    await expect(checkPdfInflation(nested, 32 << 20)).resolves.toBeUndefined();
    const text = pdfWithFlateContent(deflateSync("BT /F1 18 Tf 72 720 Td (Hello) Tj ET"));
    await expect(checkPdfInflation(text, 1024)).resolves.toBeUndefined();
    await expect(checkPdfInflation(new Uint8Array(makePdf(["Page one"], 100_000)), 1024)).resolves.toBeUndefined();
  }, 30_000);
});
