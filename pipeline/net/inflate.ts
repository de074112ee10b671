// Decompression with a cap on the inflated size, never on the event loop in one piece: a 1 MB gzip can inflate to
// gigabytes. zlib works through the stream chunk by chunk (on the libuv thread pool) and stops as soon as the output
// passes the cap, so memory stays bounded by the cap and the event loop keeps turning.
import { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate, createInflateRaw, type Gunzip } from "node:zlib";

export class InflateTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`inflated size larger than ${maxBytes} bytes`);
    this.maxBytes = maxBytes;
  }
}

/** The Content-Encoding values this module decodes (anything else is kept as is). */
export const DECODABLE = new Set(["gzip", "x-gzip", "deflate", "br"]);

function decoder(encoding: string, first: number | undefined): Gunzip | ReturnType<typeof createInflate> | ReturnType<typeof createBrotliDecompress> | ReturnType<typeof createInflateRaw> {
  if (encoding === "br") return createBrotliDecompress();
  // "deflate" is zlib-wrapped by the RFC, raw deflate by some servers: a zlib header starts with 0x?8 (CM=8)
  if (encoding === "deflate") return first !== undefined && (first & 0x0f) === 8 ? createInflate() : createInflateRaw();
  return createGunzip();
}

/**
 * Inflates `source` (a buffer, or a stream of buffers) encoded with `encoding` ("gzip", "deflate", "br"), and
 * rejects with InflateTooLargeError once the output passes `maxBytes`. Several content codings ("gzip, br") are
 * undone in reverse order.
 */
export async function inflateCapped(source: Buffer | AsyncIterable<Buffer>, encoding: string, maxBytes: number): Promise<Buffer> {
  const codings = encoding.split(",").map((c) => c.trim().toLowerCase()).filter((c) => c && c !== "identity");
  let input: Buffer | AsyncIterable<Buffer> = source;
  for (let i = codings.length - 1; i >= 0; i--) input = await inflateOne(input, codings[i] as string, maxBytes);
  return Buffer.isBuffer(input) ? input : await readCapped(input, maxBytes);
}

async function inflateOne(source: Buffer | AsyncIterable<Buffer>, coding: string, maxBytes: number): Promise<Buffer> {
  const iterator = Buffer.isBuffer(source) ? null : source[Symbol.asyncIterator]();
  const firstChunk = iterator ? await iterator.next() : { done: false, value: source as Buffer };
  const first = firstChunk.done ? undefined : (firstChunk.value as Buffer);
  const z = decoder(coding, first?.[0]);
  async function* all() {
    if (first) yield first;
    if (iterator) for (let r = await iterator.next(); !r.done; r = await iterator.next()) yield r.value as Buffer;
  }
  const src = Readable.from(all());
  src.on("error", (err) => z.destroy(err)); // a body that fails (time-out, reset) fails the inflate
  src.pipe(z);
  return readCapped(z, maxBytes, () => {
    src.destroy();
    z.destroy();
  });
}

/** Reads a stream into one buffer, rejecting with InflateTooLargeError once it passes `maxBytes`. */
export async function readCapped(stream: AsyncIterable<Buffer>, maxBytes: number, stop?: () => void): Promise<Buffer> {
  const out: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > maxBytes) {
      stop?.();
      throw new InflateTooLargeError(maxBytes);
    }
    out.push(chunk);
  }
  return Buffer.concat(out);
}
