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

const zstdCodec = {
  compress: (encoder: { buffer: Buffer }) => compress(encoder.buffer, { params: { [constants.ZSTD_c_compressionLevel]: ZSTD_LEVEL } }),
  decompress: (buffer: Buffer) => decompress(buffer),
};
CompressionCodecs[CompressionTypes.ZSTD] = () => zstdCodec;

export type KafkaCompression = "none" | "gzip" | "zstd";

export function compressionType(name: KafkaCompression): kafkajs.CompressionTypes {
  return name === "zstd" ? CompressionTypes.ZSTD : name === "gzip" ? CompressionTypes.GZIP : CompressionTypes.None;
}
