// PDF text with pdfjs-dist, page by page, as markdown (pages separated by a rule). Runs without a worker thread.
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { checkPdfInflation, PDF_MAX_INFLATED_BYTES } from "./pdf-inflation.ts";

export interface PdfText {
  markdown: string;
  /** Pages in the file. */
  numPages: number;
  /** Pages parsed (at most maxPages). */
  parsedPages: number;
  title?: string;
}

export async function pdfToMarkdown(bytes: Uint8Array, maxPages?: number, maxInflatedBytes = PDF_MAX_INFLATED_BYTES): Promise<PdfText> {
  // a decompression bomb fails here (SCRAPE_TOO_LARGE), and a stream the guard cannot decode as pdfjs would (SCRAPE_UNPARSEABLE), before pdfjs
  await checkPdfInflation(bytes, maxInflatedBytes);
  // pdfjs refuses Buffer and takes ownership of (detaches) what it is given: hand it a copy
  const task = getDocument({ data: new Uint8Array(bytes), disableFontFace: true, useSystemFonts: false, verbosity: 0 });
  const doc = await task.promise;
  try {
    const numPages = doc.numPages;
    const parsedPages = Math.min(numPages, maxPages ?? numPages);
    const pages: string[] = [];
    for (let i = 1; i <= parsedPages; i++) {
      const page = await doc.getPage(i);
      const content = await page.getTextContent();
      let text = "";
      for (const item of content.items) {
        if (!("str" in item)) continue;
        text += item.str + (item.hasEOL ? "\n" : "");
      }
      pages.push(text.replace(/[ \t]+\n/g, "\n").trim());
      page.cleanup();
    }
    const info = (await doc.getMetadata().catch(() => null))?.info as { Title?: string } | undefined;
    return { markdown: pages.join("\n\n---\n\n"), numPages, parsedPages, ...(info?.Title ? { title: info.Title } : {}) };
  } finally {
    await task.destroy();
  }
}
