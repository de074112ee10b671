// DOCX -> HTML for POST /v2/parse, with mammoth (the maintained DOCX-to-semantic-HTML converter: headings, lists,
// tables, links, images as data URLs). The HTML then goes through the same conversion as a fetched page.
// A DOCX is a zip: before mammoth reads it, every entry its zip reader will read (zip-directory.ts: the central
// directory read entry by entry, as jszip reads it, never the end record's count) is inflated here (counted, not kept)
// under a total budget, so that a small file that inflates to gigabytes (a zip bomb) is refused instead of filling the heap. mammoth never reads files outside
// the document (externalFileAccess: false).
import { createInflateRaw } from "node:zlib";
import mammoth from "mammoth";
import { readZipDirectory, type ZipEntry, ZipDirectoryError } from "./zip-directory.ts";

export class DocxError extends Error {}

/** What the entries of one DOCX may inflate to, in total (mammoth holds the document's XML tree in memory). */
export const DOCX_MAX_INFLATED_BYTES = 100 * 1024 * 1024;

/** The inflated size of one deflated entry, counted as it streams (nothing kept), stopping past `limit`. */
function inflatedSize(data: Buffer, limit: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    let size = 0;
    inflate.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        inflate.destroy();
        resolve(size);
      }
    });
    inflate.on("end", () => resolve(size));
    inflate.on("error", (err) => reject(new DocxError(`not a DOCX file (an entry does not inflate: ${err.message})`)));
    inflate.end(data);
  });
}

/**
 * Refuses a zip whose entries inflate past `budget` bytes, or that is not a zip. The entries are those jszip (inside
 * mammoth) will read, found as it finds them (zip-directory.ts); each is inflated by zlib and counted (nothing kept),
 * and must inflate to the size its directory entry declares (jszip fails it otherwise, once inflated).
 */
export async function checkZip(bytes: Buffer, budget = DOCX_MAX_INFLATED_BYTES): Promise<void> {
  let entries: ZipEntry[];
  try {
    entries = readZipDirectory(bytes);
  } catch (err) {
    if (err instanceof ZipDirectoryError) throw new DocxError(`not a DOCX file (${err.message})`);
    throw err;
  }
  const tooLarge = () => new DocxError(`the DOCX inflates to more than ${budget} bytes`);
  if (entries.reduce((sum, e) => sum + e.uncompressedSize, 0) > budget) throw tooLarge();
  let left = budget;
  for (const entry of entries) {
    const data = bytes.subarray(entry.dataStart, entry.dataStart + entry.compressedSize);
    const size = entry.method === 0 ? data.length : await inflatedSize(data, Math.min(left, entry.uncompressedSize));
    left -= size;
    if (left < 0) throw tooLarge();
    if (size !== entry.uncompressedSize) throw new DocxError("not a DOCX file (a zip entry inflates to another size than its directory declares)");
  }
}

/**
 * The DOCX as HTML (a whole document, so the HTML path finds its body) and mammoth's warnings. `budget`: what its
 * entries may inflate to (a convert worker's is sized to its heap: document.ts docxBudgetBytes).
 */
export async function docxToHtml(bytes: Buffer, budget = DOCX_MAX_INFLATED_BYTES): Promise<{ html: string; warnings: string[] }> {
  await checkZip(bytes, budget);
  let result: Awaited<ReturnType<typeof mammoth.convertToHtml>>;
  try {
    result = await mammoth.convertToHtml({ buffer: bytes }, { externalFileAccess: false });
  } catch (err) {
    throw new DocxError(`not a readable DOCX file: ${(err as Error).message}`);
  }
  const warnings = result.messages.filter((m) => m.type === "warning").map((m) => m.message);
  return { html: `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${result.value}</body></html>`, warnings };
}
