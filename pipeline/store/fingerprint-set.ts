// A set of 64-bit fingerprints in one typed array (open addressing, linear probing): what the embedded store keeps in
// memory per stored document of a crawl being written (the URL keys themselves stay on disk). A slot is two 32-bit
// words; the table grows by half once three quarters full, so a member costs 10.7 to 16 bytes (8 / load).
import { fingerprint as hashKey, fp } from "../url/fingerprint.ts";

/** The fingerprint of a key (url/fingerprint.ts, the frontier's too) as two 32-bit words (never both zero: zero is an empty slot). */
export function fingerprint(key: string): [number, number] {
  hashKey(key);
  return fp.hi === 0 && fp.lo === 0 ? [0, 1] : [fp.hi, fp.lo];
}

const MAX_LOAD = 0.75;

export class FingerprintSet {
  private slots: Uint32Array;
  private count = 0;

  constructor(expected = 0) {
    this.slots = new Uint32Array(2 * Math.max(16, Math.ceil(expected / MAX_LOAD) + 1));
  }

  get size(): number {
    return this.count;
  }

  /** Bytes held by the table. */
  get bytes(): number {
    return this.slots.byteLength;
  }

  has(hi: number, lo: number): boolean {
    const at = this.find(hi, lo);
    return this.slots[at] !== 0 || this.slots[at + 1] !== 0;
  }

  /** Adds a fingerprint; false when it was there. */
  add(hi: number, lo: number): boolean {
    let at = this.find(hi, lo);
    if (this.slots[at] !== 0 || this.slots[at + 1] !== 0) return false;
    if (this.count + 1 > MAX_LOAD * (this.slots.length / 2)) {
      this.grow();
      at = this.find(hi, lo);
    }
    this.slots[at] = hi;
    this.slots[at + 1] = lo;
    this.count++;
    return true;
  }

  /** The slot (word index) holding the fingerprint, or the empty one where it would go. */
  private find(hi: number, lo: number): number {
    const n = this.slots.length / 2;
    let i = (hi ^ Math.imul(lo, 0x9e3779b1)) >>> 0;
    i %= n;
    for (;;) {
      const a = this.slots[2 * i] as number;
      const b = this.slots[2 * i + 1] as number;
      if ((a === 0 && b === 0) || (a === hi && b === lo)) return 2 * i;
      i = i + 1 === n ? 0 : i + 1;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(2 * Math.ceil((old.length / 2) * 1.5));
    for (let i = 0; i < old.length; i += 2) {
      const hi = old[i] as number;
      const lo = old[i + 1] as number;
      if (hi === 0 && lo === 0) continue;
      const at = this.find(hi, lo);
      this.slots[at] = hi;
      this.slots[at + 1] = lo;
    }
  }
}

/**
 * Keys (by their 64-bit fingerprint) to a 32-bit value, in one typed array: three words a slot, at most 24 bytes a
 * key. Two keys sharing a fingerprint (about one chance in 10^7 between two million-key crawls) read as one.
 */
export class FingerprintMap {
  private slots: Uint32Array;
  private count = 0;

  constructor(expected = 0) {
    this.slots = new Uint32Array(3 * Math.max(16, Math.ceil(expected / MAX_LOAD) + 1));
  }

  get size(): number {
    return this.count;
  }

  get bytes(): number {
    return this.slots.byteLength;
  }

  get(key: string): number | undefined {
    const [hi, lo] = fingerprint(key);
    const at = this.find(hi, lo);
    return this.slots[at] === 0 && this.slots[at + 1] === 0 ? undefined : (this.slots[at + 2] as number);
  }

  set(key: string, value: number): void {
    const [hi, lo] = fingerprint(key);
    let at = this.find(hi, lo);
    if (this.slots[at] === 0 && this.slots[at + 1] === 0) {
      if (this.count + 1 > MAX_LOAD * (this.slots.length / 3)) {
        this.grow();
        at = this.find(hi, lo);
      }
      this.slots[at] = hi;
      this.slots[at + 1] = lo;
      this.count++;
    }
    this.slots[at + 2] = value;
  }

  private find(hi: number, lo: number): number {
    const n = this.slots.length / 3;
    let i = ((hi ^ Math.imul(lo, 0x9e3779b1)) >>> 0) % n;
    for (;;) {
      const a = this.slots[3 * i] as number;
      const b = this.slots[3 * i + 1] as number;
      if ((a === 0 && b === 0) || (a === hi && b === lo)) return 3 * i;
      i = i + 1 === n ? 0 : i + 1;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(3 * Math.ceil((old.length / 3) * 1.5));
    for (let i = 0; i < old.length; i += 3) {
      if (old[i] === 0 && old[i + 1] === 0) continue;
      const at = this.find(old[i] as number, old[i + 1] as number);
      this.slots.set(old.subarray(i, i + 3), at);
    }
  }
}

/** A set of keys by their fingerprint (FingerprintSet with the keys hashed here). */
export class KeySet {
  private readonly set = new FingerprintSet();

  has(key: string): boolean {
    const [hi, lo] = fingerprint(key);
    return this.set.has(hi, lo);
  }

  add(key: string): void {
    const [hi, lo] = fingerprint(key);
    this.set.add(hi, lo);
  }
}
