// The 64-bit fingerprint of a URL key: the first 64 bits of MurmurHash3_x86_128 (seed 0) of the key's UTF-16LE bytes,
// computed from the string's code units (no encoding, no allocation). MurmurHash3 passes SMHasher's avalanche and
// collision tests, so distinct keys collide as random 64-bit values do (url-table.ts states the bound).
const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Written by fingerprint(): the high and low 32 bits of the last key's fingerprint (unsigned). */
export const fp = { hi: 0, lo: 0 };

/** The 64-bit fingerprint of `key` into `fp` (one shared result: the caller reads it before the next call). */
export function fingerprint(key: string): void {
  const n = key.length;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  // a 16-byte block is 8 code units; a 32-bit word is two code units, the first in the low half (little-endian)
  const blocks = n & ~7;
  let i = 0;
  for (; i < blocks; i += 8) {
    let k1 = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
    let k2 = key.charCodeAt(i + 2) | (key.charCodeAt(i + 3) << 16);
    let k3 = key.charCodeAt(i + 4) | (key.charCodeAt(i + 5) << 16);
    let k4 = key.charCodeAt(i + 6) | (key.charCodeAt(i + 7) << 16);
    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 ^= k1;
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 ^= k2;
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 ^= k3;
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 ^= k4;
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  // the tail: up to 7 code units (14 bytes) in up to four words
  const rest = n - blocks;
  if (rest > 0) {
    const w = [0, 0, 0, 0];
    for (let j = 0; j < rest; j++) w[j >> 1] = (w[j >> 1] as number) | (key.charCodeAt(i + j) << ((j & 1) * 16));
    if (rest > 6) h4 ^= Math.imul(rotl(Math.imul(w[3] as number, C4), 18), C1);
    if (rest > 4) h3 ^= Math.imul(rotl(Math.imul(w[2] as number, C3), 17), C4);
    if (rest > 2) h2 ^= Math.imul(rotl(Math.imul(w[1] as number, C2), 16), C3);
    h1 ^= Math.imul(rotl(Math.imul(w[0] as number, C1), 15), C2);
  }
  const bytes = n * 2;
  h1 ^= bytes;
  h2 ^= bytes;
  h3 ^= bytes;
  h4 ^= bytes;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  fp.hi = h1 >>> 0;
  fp.lo = h2 >>> 0;
}
