// The Java client's partitioner for keyed records: toPositive(murmur2(key bytes)) % partitions. The previous Node
// client's default partitioner and librdkafka's `murmur2_random` give the same answer, so a crawl keeps its partition
// whichever client produced it (a rolling upgrade, a mixed deployment, a tool writing to frontier.inbox).

const SEED = 0x9747b28c;
const M = 0x5bd1e995;

/** Kafka's `Utils.murmur2` (32-bit, signed), computed in 32-bit integer arithmetic as Java does. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = (data[i4]! & 0xff) | ((data[i4 + 1]! & 0xff) << 8) | ((data[i4 + 2]! & 0xff) << 16) | ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, M);
    k ^= k >>> 24;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length % 4;
  if (rest === 3) h ^= (data[tail + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[tail + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[tail]! & 0xff;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

const encoder = new TextEncoder();

/** The partition the Java client gives a record with this (non-null) key, among `partitions`. */
export function javaPartition(key: string | Uint8Array, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  const bytes = typeof key === "string" ? encoder.encode(key) : key;
  return (murmur2(bytes) & 0x7fffffff) % partitions;
}
