// kafkajs builds every request with its protocol Encoder: one per record, per record batch, per partition, per topic
// and per request, each starting with Buffer.alloc(512) and growing by Buffer.alloc of the next power of two, and each
// copied whole into its parent. Buffer.alloc zero-fills and never takes Node's 8 KB pool: in `--cpu-prof` of a cluster
// crawl those allocations were ~5 % of Trawl's main thread. Every write of the Encoder goes at its offset and only the
// bytes before the offset are ever read (`buffer` is a slice up to it), so the zeros are never seen: here the growth
// takes Buffer.allocUnsafe (patched on the prototype: always in effect) and, when this module loads before kafkajs'
// encoder (kafka-bus.ts imports it first), so does the constructor (the module's export replaced in require's cache;
// `pooledEncoderInstalled` says whether it was). Output bytes are the same either way (kafkajs-encoder.test.ts).
import { createRequire } from "node:module";

interface EncoderLike {
  buf: Buffer;
  offset: number;
}

interface EncoderClass {
  new (initialSize?: number): EncoderLike;
  prototype: EncoderLike & { ensureAvailable(length: number): void };
  nextPowerOfTwo(value: number): number;
}

const require = createRequire(import.meta.url);
const encoderPath = require.resolve("kafkajs/src/protocol/encoder.js");
const loadedBefore = require.cache[encoderPath] !== undefined;
const Encoder = require(encoderPath) as EncoderClass;

Encoder.prototype.ensureAvailable = function ensureAvailable(this: EncoderLike, length: number): void {
  if (this.offset + length <= this.buf.length) return;
  const grown = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(this.offset + length));
  this.buf.copy(grown, 0, 0, this.offset);
  this.buf = grown;
};

/** An Encoder whose first buffer comes from Node's pool (small ones) and is not zero-filled. */
function PooledEncoder(this: EncoderLike, initialSize = 511): void {
  this.buf = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(initialSize));
  this.offset = 0;
}
PooledEncoder.prototype = Encoder.prototype;
Object.setPrototypeOf(PooledEncoder, Encoder); // the static helpers (sizeOfVarInt, nextPowerOfTwo, ...)

/** false when kafkajs had loaded its encoder before this module: its constructor then keeps Buffer.alloc (still right). */
export const pooledEncoderInstalled = !loadedBefore;
if (pooledEncoderInstalled) (require.cache[encoderPath] as NodeJS.Module).exports = PooledEncoder;
