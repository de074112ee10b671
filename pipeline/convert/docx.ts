// DOCX -> HTML for POST /v2/parse, with mammoth (the maintained DOCX-to-semantic-HTML converter: headings, lists,
// tables, links, images as data URLs). The HTML then goes through the same conversion as a fetched page.
// A DOCX is a zip: before mammoth reads it, every entry is inflated here (counted, not kept) under a total budget, so that a small file
// that inflates to gigabytes (a zip bomb) is refused instead of filling the heap. mammoth never reads files outside
// the document (externalFileAccess: false).
import { createInflateRaw } from "node:zlib";
import mammoth from "mammoth";

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

/** Refuses a zip whose entries inflate past `budget` bytes, or that is not a zip. */
export async function checkZip(bytes: Buffer, budget = DOCX_MAX_INFLATED_BYTES): Promise<void> {
  // the end of central directory record: signature 0x06054b50, within the last 64 KB + 22 bytes
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 65_557); i--) {
    if (bytes.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new DocxError("not a DOCX file (no zip directory)");
  const entries = bytes.readUInt16LE(eocd + 10);
  let at = bytes.readUInt32LE(eocd + 16);
  let left = budget;
  for (let n = 0; n < entries; n++) {
    if (at + 46 > bytes.length || bytes.readUInt32LE(at) !== 0x02014b50) throw new DocxError("not a DOCX file (damaged zip directory)");
    const method = bytes.readUInt16LE(at + 10);
    const compressed = bytes.readUInt32LE(at + 20);
    const nameLen = bytes.readUInt16LE(at + 28);
    const extraLen = bytes.readUInt16LE(at + 30);
    const commentLen = bytes.readUInt16LE(at + 32);
    const local = bytes.readUInt32LE(at + 42);
    if (local + 30 > bytes.length || bytes.readUInt32LE(local) !== 0x04034b50) throw new DocxError("not a DOCX file (damaged zip entry)");
    const dataAt = local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28);
    const data = bytes.subarray(dataAt, dataAt + compressed);
    if (method === 0) left -= data.length;
    else if (method === 8) left -= await inflatedSize(data, left);
    else throw new DocxError(`not a DOCX file (zip compression method ${method})`);
    if (left < 0) throw new DocxError(`the DOCX inflates to more than ${budget} bytes`);
    at += 46 + nameLen + extraLen + commentLen;
  }
}

/** The DOCX as HTML (a whole document, so the HTML path finds its body) and mammoth's warnings. */
export async function docxToHtml(bytes: Buffer): Promise<{ html: string; warnings: string[] }> {
  await checkZip(bytes);
  let result: Awaited<ReturnType<typeof mammoth.convertToHtml>>;
  try {
    result = await mammoth.convertToHtml({ buffer: bytes }, { externalFileAccess: false });
  } catch (err) {
    throw new DocxError(`not a readable DOCX file: ${(err as Error).message}`);
  }
  const warnings = result.messages.filter((m) => m.type === "warning").map((m) => m.message);
  return { html: `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${result.value}</body></html>`, warnings };
}
