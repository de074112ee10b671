// kafkajs checksums every record batch it produces with CRC-32C computed a byte at a time: 2.6 ms per MB here, 0.17 ms
// of CPU per page in a cluster crawl of the manual (the public topics' batches are not compressed), about 3.5 % of
// Trawl's process. The same checksum sliced by 8 (eight tables, eight bytes per step) takes ~0.95 ms per MB.
// kafkajs loads its record batch encoder, the checksum's only user, on the first produce; replacing the checksum
// module in require's cache before that is enough. Imported by kafka-bus.ts, before any producer exists.
import { createRequire } from "node:module";

const CASTAGNOLI_REFLECTED = 0x82f63b78;

// TABLES[t * 256 + b]: the CRC of byte b followed by t zero bytes
const TABLES = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let c = b;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ CASTAGNOLI_REFLECTED : c >>> 1;
  TABLES[b] = c;
}
for (let t = 1; t < 8; t++) {
  for (let b = 0; b < 256; b++) {
    const prev = TABLES[(t - 1) * 256 + b] as number;
    TABLES[t * 256 + b] = (prev >>> 8) ^ (TABLES[prev & 0xff] as number);
  }
}

/** CRC-32C (Castagnoli) of `buf`, as an unsigned 32-bit number (what kafkajs' own function returns). */
export function crc32c(buf: Uint8Array): number {
  const T = TABLES;
  const n = buf.length;
  const end = n - (n & 7);
  let crc = -1;
  let i = 0;
  for (; i < end; i += 8) {
    const a = crc ^ ((buf[i] as number) | ((buf[i + 1] as number) << 8) | ((buf[i + 2] as number) << 16) | ((buf[i + 3] as number) << 24));
    crc =
      (T[1792 + (a & 0xff)] as number) ^ (T[1536 + ((a >>> 8) & 0xff)] as number) ^ (T[1280 + ((a >>> 16) & 0xff)] as number) ^ (T[1024 + (a >>> 24)] as number) ^
      (T[768 + (buf[i + 4] as number)] as number) ^ (T[512 + (buf[i + 5] as number)] as number) ^ (T[256 + (buf[i + 6] as number)] as number) ^ (T[buf[i + 7] as number] as number);
  }
  for (; i < n; i++) crc = (T[(crc ^ (buf[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

const require = createRequire(import.meta.url);
const encoderPath = require.resolve("kafkajs/src/protocol/recordBatch/v0/index.js");
const checksumPath = require.resolve("kafkajs/src/protocol/recordBatch/crc32C/index.js");

/** false when a record batch was built before this module loaded: kafkajs then keeps its own checksum (still right). */
export const crc32cInstalled = require.cache[encoderPath] === undefined;
if (crc32cInstalled) {
  require(checksumPath);
  (require.cache[checksumPath] as NodeJS.Module).exports = crc32c;
}
