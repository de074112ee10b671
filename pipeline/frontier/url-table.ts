// The URLs a crawl has seen (queued, done, failed, blocked), without their text: a 64-bit fingerprint of each URL key
// (fingerprint.ts) with its packed state and depth, in an open-addressing table of typed arrays. A slot is 10 bytes
// (fingerprint 8, packed state 2); the table holds at most 80 % of its slots and grows by a quarter, so it costs
// 12.5 to 15.6 bytes per URL (below 16) once past its first 64 slots, whatever the crawl's size. The URL text lives
// in the store's URL rows and in Kafka, where the readers that need it (resume, admission, change tracking) take it.
//
// Collisions: two distinct keys share a fingerprint with probability 2^-64 (MurmurHash3's 64 bits behave as random), so
// a crawl of n URLs has any collision at all with probability at most n²/2^65: 2.7e-8 for 1,000,000 URLs, 2.7e-6
// for 10,000,000, 2.7e-4 for 100,000,000 (CRAWL_MAX_PAGES' default). A key that collides with one seen before is
// taken for it: it is not crawled (as a duplicate would not be) and the crawl's counts stay exact for what it did
// crawl; nothing else is affected.
//
// Depth is kept up to MAX_DEPTH (16,382): a deeper URL's later rows (done, failed) record MAX_DEPTH; its fetch task
// carries its true depth (from the message that found it, or from its queued row when resumed).
import { fingerprint, fp } from "../url/fingerprint.ts";

export const MAX_DEPTH = 16_382;
const MIN_SLOTS = 64;
const MAX_LOAD = 0.8;
const GROWTH = 1.25;

export class UrlTable {
  private hi: Uint32Array;
  private lo: Uint32Array;
  /** packed state and depth + 1 (0: empty slot) */
  private val: Uint16Array;
  private count = 0;

  constructor(slots = MIN_SLOTS) {
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.val = new Uint16Array(slots);
  }

  /** Slots for `n` URLs, at 70 % of the table (a restored crawl's URLs are known at once). */
  static slotsFor(n: number): number {
    return Math.max(MIN_SLOTS, Math.ceil(n / 0.7));
  }

  /** URLs held. */
  get size(): number {
    return this.count;
  }

  /** Bytes of its arrays. */
  get bytes(): number {
    return this.val.length * 10;
  }

  /** The slot of the fingerprint in `fp`: where it is, or the empty slot where it would go. */
  private slot(): number {
    const { hi, lo, val } = this;
    const cap = val.length;
    let i = fp.hi % cap;
    while (val[i] !== 0 && (hi[i] !== fp.hi || lo[i] !== fp.lo)) i = i + 1 === cap ? 0 : i + 1;
    return i;
  }

  /** The URL key's packed state and depth (reducer.ts: state in the low 2 bits, depth above), or undefined when unseen. */
  get(key: string): number | undefined {
    fingerprint(key);
    const v = this.val[this.slot()] as number;
    return v === 0 ? undefined : v - 1;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Sets the key's packed state and depth (the depth part is kept up to MAX_DEPTH); returns what it was (get). */
  set(key: string, packed: number): number | undefined {
    fingerprint(key);
    let i = this.slot();
    const before = this.val[i] as number;
    if (before === 0) {
      if (this.count + 1 > this.val.length * MAX_LOAD) {
        this.grow();
        i = this.slot();
      }
      this.hi[i] = fp.hi;
      this.lo[i] = fp.lo;
      this.count++;
    }
    this.val[i] = Math.min(packed, (MAX_DEPTH << 2) | (packed & 3)) + 1;
    return before === 0 ? undefined : before - 1;
  }

  private grow(): void {
    const { hi, lo, val } = this;
    const saved = { hi: fp.hi, lo: fp.lo };
    const slots = Math.ceil(val.length * GROWTH);
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.val = new Uint16Array(slots);
    for (let j = 0; j < val.length; j++) {
      if (val[j] === 0) continue;
      fp.hi = hi[j] as number;
      fp.lo = lo[j] as number;
      const i = this.slot();
      this.hi[i] = fp.hi;
      this.lo[i] = fp.lo;
      this.val[i] = val[j] as number;
    }
    fp.hi = saved.hi;
    fp.lo = saved.lo;
  }
}
