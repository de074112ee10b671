// A PDF's compressed streams can inflate to gigabytes (a 260 KB file with one FlateDecode stream of zeros took
// pdfjs 14 s and 330 MB here for 256 MB). Before pdfjs sees a file, every zlib stream in it is inflated by zlib as a
// stream, counting and discarding the output, nested Flate layers included, against one budget for the file.
import { Readable } from "node:stream";
import { createInflate } from "node:zlib";
import { PageError } from "../runtime/errors.ts";

/** Largest total inflated size of a PDF's Flate streams. */
export const PDF_MAX_INFLATED_BYTES = 128 * 1024 * 1024;
const MAX_NESTING = 3;

export class PdfTooLargeError extends PageError {
  constructor(message: string) {
    super("SCRAPE_TOO_LARGE", message);
  }
}

/** A zlib header (RFC 1950): deflate method, and the check bits make the 16-bit value a multiple of 31. */
const zlibHeader = (b0: number | undefined, b1: number | undefined) =>
  b0 !== undefined && b1 !== undefined && (b0 & 0x0f) === 8 && (b0 >> 4) <= 7 && ((b0 << 8) | b1) % 31 === 0;

/** The data of every `stream … endstream` in the file. */
function streams(bytes: Uint8Array): Uint8Array[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const out: Uint8Array[] = [];
  const re = />>\s*stream\r?\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + m[0].length;
    const end = text.indexOf("endstream", start);
    if (end < 0) break;
    out.push(bytes.subarray(start, end));
    re.lastIndex = end;
  }
  return out;
}

/** Inflates `source`, counting output against `budget.left`; a zlib stream inside is inflated in turn. */
async function inflatedSize(source: AsyncIterable<Buffer>, budget: { left: number; max: number }, depth: number): Promise<void> {
  const z = createInflate();
  const src = Readable.from(source);
  src.on("error", (err) => z.destroy(err));
  src.pipe(z);
  const output = z[Symbol.asyncIterator]();
  const first = await output.next().catch(() => ({ done: true as const, value: undefined }));
  if (first.done) return;
  const head = first.value as Buffer;
  async function* rest(): AsyncGenerator<Buffer> {
    yield head;
    for (let r = await output.next(); !r.done; r = await output.next()) yield r.value as Buffer;
  }
  try {
    if (depth < MAX_NESTING && zlibHeader(head[0], head[1])) {
      await inflatedSize(rest(), budget, depth + 1);
      return;
    }
    for await (const chunk of rest()) {
      budget.left -= chunk.length;
      if (budget.left < 0) throw new PdfTooLargeError(`PDF streams inflate to more than ${budget.max} bytes`);
    }
  } catch (err) {
    if (err instanceof PdfTooLargeError) throw err;
    // a corrupt stream: pdfjs reports it (or skips it) as it would have
  } finally {
    src.destroy();
    z.destroy();
  }
}

/** Rejects with PdfTooLargeError when the file's Flate streams inflate to more than `maxBytes` together. */
export async function checkPdfInflation(bytes: Uint8Array, maxBytes = PDF_MAX_INFLATED_BYTES): Promise<void> {
  const budget = { left: maxBytes, max: maxBytes };
  for (const data of streams(bytes)) {
    if (!zlibHeader(data[0], data[1])) continue;
    async function* one(): AsyncGenerator<Buffer> {
      yield Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    }
    await inflatedSize(one(), budget, 1);
  }
}
