// The compressions Trawl's producer may use (KAFKA_COMPRESSION, KAFKA_PUBLIC_COMPRESSION) and the name the client
// (@platformatic/kafka) takes for each. The client compresses and decompresses gzip and zstd with Node's own zlib
// (zstd at zlib's default level), so every consumer of this process reads zstd batches whoever produced them (a Java
// producer, another Trawl with compression on).
import { CompressionAlgorithms, type CompressionAlgorithmValue } from "@platformatic/kafka";

export type KafkaCompression = "none" | "gzip" | "zstd";

export function compressionType(name: KafkaCompression): CompressionAlgorithmValue {
  return name === "zstd" ? CompressionAlgorithms.ZSTD : name === "gzip" ? CompressionAlgorithms.GZIP : CompressionAlgorithms.NONE;
}
