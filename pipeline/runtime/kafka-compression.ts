// zstd for kafkajs, on Node's own zlib (Node ≥ 22.15): kafkajs ships only gzip. Compression and decompression run on
// libuv's thread pool, not on the event loop the stages share. Registered when this module loads, so every consumer
// of this process reads zstd batches whoever produced them (a Java producer, another Trawl with compression on).
import { promisify } from "node:util";
import { constants, zstdCompress, zstdDecompress } from "node:zlib";
import kafkajs from "kafkajs";

const { CompressionCodecs, CompressionTypes } = kafkajs;

const compress = promisify(zstdCompress);
const decompress = promisify(zstdDecompress);

/** zstd's fastest levels compress HTML 4-6×; higher levels cost far more CPU for a few percent. */
export const ZSTD_LEVEL = 1;

// Output buffers sized to the expected result: with zlib's default 16 KB chunks a 1 MB batch made ~60 round trips
// between the thread pool and the event loop (the main thread's share of a batch of the manual's pages: 48-63 ms
// default, 19-28 ms sized, for 6 batches of 1 MB compressed and decompressed 5 times).
const zstdCodec = {
  compress: (encoder: { buffer: Buffer }) => compress(encoder.buffer, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL }, chunkSize: Math.max(16 * 1024, encoder.buffer.length) }),
  // pages compress ~5×: 8× the input is one chunk for most batches
  decompress: (buffer: Buffer) => decompress(buffer, { chunkSize: Math.min(Math.max(64 * 1024, buffer.length * 8), 32 * 1024 * 1024) }),
};
CompressionCodecs[CompressionTypes.ZSTD] = () => zstdCodec;

export type KafkaCompression = "none" | "gzip" | "zstd";

export function compressionType(name: KafkaCompression): kafkajs.CompressionTypes {
  return name === "zstd" ? CompressionTypes.ZSTD : name === "gzip" ? CompressionTypes.GZIP : CompressionTypes.None;
}
