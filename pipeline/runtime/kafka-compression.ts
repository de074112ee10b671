// zstd for kafkajs, on Node's own zlib (Node ≥ 22.15): kafkajs ships only gzip. Large batches are compressed and
// decompressed on libuv's thread pool, the others on the event loop (ZSTD_SYNC_MAX_BYTES). Registered when this module
// loads, so every consumer of this process reads zstd batches whoever produced them (a Java producer, another Trawl
// with compression on).
import { promisify } from "node:util";
import { constants, zstdCompress, zstdCompressSync, zstdDecompress, zstdDecompressSync } from "node:zlib";
import kafkajs from "kafkajs";

const { CompressionCodecs, CompressionTypes } = kafkajs;

const compress = promisify(zstdCompress);
const decompress = promisify(zstdDecompress);

/** zstd's fastest levels compress HTML 4-6×; higher levels cost far more CPU for a few percent. */
export const ZSTD_LEVEL = 1;

/** Batches up to this size are compressed on the event loop itself, and compressed batches up to a quarter of it are
 * decompressed there. A call on the thread pool costs 60-100 µs more CPU than the same call made synchronously
 * (a zlib stream built and torn down, two hops between threads), and most batches of a crawl are 4-64 KB, which
 * zstd's fastest level handles in 20-80 µs: the hop cost more than the work it moved. */
export const ZSTD_SYNC_MAX_BYTES = 1024 * 1024;

const compressOptions = (length: number) => ({ params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL }, chunkSize: Math.max(16 * 1024, length) });
// Output buffers sized to the expected result: with zlib's default 16 KB chunks a 1 MB batch made ~60 round trips
// between the thread pool and the event loop (the main thread's share of a batch of the manual's pages: 48-63 ms
// default, 19-28 ms sized, for 6 batches of 1 MB compressed and decompressed 5 times). Pages compress ~5×: 8× the
// input is one chunk for most batches.
const decompressOptions = (length: number) => ({ chunkSize: Math.min(Math.max(64 * 1024, length * 8), 32 * 1024 * 1024) });

/**
 * zlib returns its output as a view of the chunk it decoded into (64 KB at least), and each message kafkajs hands over
 * is a view of that: every message of a batch in flight kept the whole chunk alive. Heap snapshots of a cluster crawl
 * held 1,732 such 64 KB chunks (113 MB) for the 2,882 pages of one pages.fetched fetch. A result much smaller than its
 * chunk is copied to a buffer of its own size (one copy of the decoded bytes; zstd decoding them cost far more).
 */
export function ownBuffer(buf: Buffer): Buffer {
  const wasted = buf.buffer.byteLength - buf.length;
  if (wasted <= 8 * 1024 || wasted <= buf.length) return buf;
  // not Buffer.from: below 32 KB that slices Node's shared 64 KB pool, which the copy would then keep alive instead
  const own = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(own);
  return own;
}

/** A synchronous call as kafkajs expects a codec to answer: a promise, rejected (never thrown) on a bad batch. */
function promised(fn: () => Buffer): Promise<Buffer> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err as Error);
  }
}

export const zstdCodec = {
  compress: ({ buffer }: { buffer: Buffer }) =>
    buffer.length > ZSTD_SYNC_MAX_BYTES ? compress(buffer, compressOptions(buffer.length)) : promised(() => zstdCompressSync(buffer, compressOptions(buffer.length))),
  decompress: (buffer: Buffer) =>
    (buffer.length > ZSTD_SYNC_MAX_BYTES / 4 ? decompress(buffer, decompressOptions(buffer.length)) : promised(() => zstdDecompressSync(buffer, decompressOptions(buffer.length)))).then(ownBuffer),
};
CompressionCodecs[CompressionTypes.ZSTD] = () => zstdCodec;

export type KafkaCompression = "none" | "gzip" | "zstd";

export function compressionType(name: KafkaCompression): kafkajs.CompressionTypes {
  return name === "zstd" ? CompressionTypes.ZSTD : name === "gzip" ? CompressionTypes.GZIP : CompressionTypes.None;
}
