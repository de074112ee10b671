import { describe, expect, it } from "vitest";
import { fingerprint, fp } from "./fingerprint.ts";

// MurmurHash3_x86_128 over bytes, written from the reference C (smhasher/src/MurmurHash3.cpp), as the yardstick
const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
const fmix = (h: number) => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
};
function murmur3x86128(data: Uint8Array, seed: number): number[] {
  const [c1, c2, c3, c4] = [0x239b961b, 0xab0e9789, 0x38b34ae5, 0xa1e38b93];
  let [h1, h2, h3, h4] = [seed, seed, seed, seed];
  const word = (i: number) => (data[i] ?? 0) | ((data[i + 1] ?? 0) << 8) | ((data[i + 2] ?? 0) << 16) | ((data[i + 3] ?? 0) << 24);
  const blocks = data.length >> 4;
  for (let b = 0; b < blocks; b++) {
    const i = b * 16;
    h1 ^= Math.imul(rotl(Math.imul(word(i), c1), 15), c2);
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    h2 ^= Math.imul(rotl(Math.imul(word(i + 4), c2), 16), c3);
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    h3 ^= Math.imul(rotl(Math.imul(word(i + 8), c3), 17), c4);
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    h4 ^= Math.imul(rotl(Math.imul(word(i + 12), c4), 18), c1);
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  const tail = blocks * 16;
  const left = data.length & 15;
  const k = [0, 0, 0, 0];
  for (let j = 0; j < left; j++) k[j >> 2] = (k[j >> 2] as number) | ((data[tail + j] as number) << ((j & 3) * 8));
  if (left > 12) h4 ^= Math.imul(rotl(Math.imul(k[3] as number, c4), 18), c1);
  if (left > 8) h3 ^= Math.imul(rotl(Math.imul(k[2] as number, c3), 17), c4);
  if (left > 4) h2 ^= Math.imul(rotl(Math.imul(k[1] as number, c2), 16), c3);
  if (left > 0) h1 ^= Math.imul(rotl(Math.imul(k[0] as number, c1), 15), c2);
  [h1, h2, h3, h4] = [h1 ^ data.length, h2 ^ data.length, h3 ^ data.length, h4 ^ data.length];
  h1 = (h1 + h2 + h3 + h4) | 0;
  [h2, h3, h4] = [(h2 + h1) | 0, (h3 + h1) | 0, (h4 + h1) | 0];
  [h1, h2, h3, h4] = [fmix(h1), fmix(h2), fmix(h3), fmix(h4)];
  h1 = (h1 + h2 + h3 + h4) | 0;
  [h2, h3, h4] = [(h2 + h1) | 0, (h3 + h1) | 0, (h4 + h1) | 0];
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

describe("URL key fingerprint", () => {
  it("the yardstick is MurmurHash3_x86_128: SMHasher's verification value 0xB3ECE62A", () => {
    // hash keys {}, {0}, {0,1}, ... {0..254} with seed 256 - i; hash the 256 hashes with seed 0; the first 4 bytes
    const hashes = new Uint8Array(256 * 16);
    const key = new Uint8Array(256);
    for (let i = 0; i < 256; i++) {
      key[i] = i;
      const h = murmur3x86128(key.subarray(0, i), 256 - i);
      const view = new DataView(hashes.buffer, i * 16, 16);
      h.forEach((w, j) => view.setUint32(j * 4, w, true));
    }
    expect((murmur3x86128(hashes, 0)[0] as number) >>> 0).toBe(0xb3ece62a);
  });

  it("is the first 64 bits of MurmurHash3_x86_128 (seed 0) of the key's UTF-16LE bytes, at every tail length", () => {
    const keys = ["", "a", "https://s.test/", "https://s.test/docs/é?q=1#x", "日本語のページ", "\u{1F600} emoji"];
    for (let n = 0; n < 40; n++) keys.push("https://docs.example.com/".slice(0, n) + "x".repeat(n % 9));
    for (const k of keys) {
      fingerprint(k);
      const [h1, h2] = murmur3x86128(new Uint8Array(Buffer.from(k, "utf16le")), 0);
      expect([fp.hi, fp.lo], k).toEqual([h1, h2]);
    }
  });

  it("gives 200,000 similar URL keys 200,000 distinct fingerprints, spread evenly over the high word", () => {
    const seen = new Set<string>();
    const buckets = new Array<number>(64).fill(0);
    for (let i = 0; i < 200_000; i++) {
      fingerprint(`https://docs.example.com/section-${i % 97}/topic/page-${i}.html`);
      seen.add(`${fp.hi}:${fp.lo}`);
      buckets[fp.hi >>> 26] = (buckets[fp.hi >>> 26] as number) + 1;
    }
    expect(seen.size).toBe(200_000);
    // 3125 per bucket expected; 6 standard deviations is ~335
    for (const b of buckets) expect(Math.abs(b - 3125)).toBeLessThan(335);
  });
});
