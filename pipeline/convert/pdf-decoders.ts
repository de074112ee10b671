// The decoders pdfjs applies to PDF streams, ported from pdfjs-dist (src/core/flate_stream.js, lzw_stream.js,
// ascii_85_stream.js, ascii_hex_stream.js, run_length_stream.js; Apache-2.0) so that a guard decodes a stream exactly
// as pdfjs will, including what pdfjs tolerates and zlib does not (a stored block of length 0/0, distances before the
// start, incomplete Huffman codes: each of them would let zlib stop early while pdfjs goes on inflating). Each decoder
// is a generator of output chunks pulling bytes from the previous one, so output is counted as it is produced and
// nothing is kept but a 64 KiB window. Differences: pdfjs copies from before the start of a Flate stream's output
// (bytes it never wrote); here that is refused when another decoder reads the output (see `strict`).
import { PdfUnaccountableError } from "./pdf-objects.ts";

export type Chunks = Iterator<Uint8Array>;

/** Byte access to a sequence of chunks (pdfjs's Stream/DecodeStream getByte, getBytes, peekByte). */
export class ByteReader {
  private chunk: Uint8Array = new Uint8Array(0);
  private at = 0;
  private readonly source: Chunks;
  constructor(source: Chunks) {
    this.source = source;
  }
  private fill(): boolean {
    while (this.at >= this.chunk.length) {
      const r = this.source.next();
      if (r.done) return false;
      this.chunk = r.value;
      this.at = 0;
    }
    return true;
  }
  byte(): number {
    return this.fill() ? this.chunk[this.at++]! : -1;
  }
  peek(): number {
    return this.fill() ? this.chunk[this.at]! : -1;
  }
  /** Up to `n` bytes (fewer at the end). */
  bytes(n: number): Uint8Array {
    if (this.fill() && this.chunk.length - this.at >= n) {
      const slice = this.chunk.subarray(this.at, this.at + n);
      this.at += n;
      return slice;
    }
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n && this.fill()) {
      const take = Math.min(n - got, this.chunk.length - this.at);
      out.set(this.chunk.subarray(this.at, this.at + take), got);
      this.at += take;
      got += take;
    }
    return got === n ? out : out.subarray(0, got);
  }
}

const CHUNK = 64 * 1024;

// pdfjs's flate tables: length and distance bases with extra bits (value | extra << 16)
const codeLenCodeMap = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
const lengthDecode = [0x00003, 0x00004, 0x00005, 0x00006, 0x00007, 0x00008, 0x00009, 0x0000a, 0x1000b, 0x1000d, 0x1000f, 0x10011, 0x20013, 0x20017, 0x2001b, 0x2001f, 0x30023, 0x3002b, 0x30033, 0x3003b, 0x40043, 0x40053, 0x40063, 0x40073, 0x50083, 0x500a3, 0x500c3, 0x500e3, 0x00102, 0x00102, 0x00102];
const distDecode = [0x00001, 0x00002, 0x00003, 0x00004, 0x10005, 0x10007, 0x20009, 0x2000d, 0x30011, 0x30019, 0x40021, 0x40031, 0x50041, 0x50061, 0x60081, 0x600c1, 0x70101, 0x70181, 0x80201, 0x80301, 0x90401, 0x90601, 0xa0801, 0xa0c01, 0xb1001, 0xb1801, 0xc2001, 0xc3001, 0xd4001, 0xd6001];
type Table = [Int32Array, number];

function huffmanTable(lengths: ArrayLike<number>): Table {
  const n = lengths.length;
  let maxLen = 0;
  for (let i = 0; i < n; ++i) if (lengths[i]! > maxLen) maxLen = lengths[i]!;
  const size = 1 << maxLen;
  const codes = new Int32Array(size);
  for (let len = 1, code = 0, skip = 2; len <= maxLen; ++len, code <<= 1, skip <<= 1) {
    for (let val = 0; val < n; ++val) {
      if (lengths[val] !== len) continue;
      let code2 = 0;
      let t = code;
      for (let i = 0; i < len; ++i) {
        code2 = (code2 << 1) | (t & 1);
        t >>= 1;
      }
      for (let i = code2; i < size; i += skip) codes[i] = (len << 16) | val;
      ++code;
    }
  }
  return [codes, maxLen];
}
const fixedLitLengths = new Uint8Array(288).fill(8, 0, 144).fill(9, 144, 256).fill(7, 256, 280).fill(8, 280, 288);
const fixedLit = huffmanTable(fixedLitLengths);
const fixedDist = huffmanTable(new Uint8Array(30).fill(5));

class FlateFormatError extends Error {}

/**
 * pdfjs's FlateStream: the zlib header checked as pdfjs checks it (method 8, FCHECK, no FDICT; the window size and
 * the Adler-32 are not), then blocks until the final one, the end of the input or a format error (which ends the
 * stream with what was decoded, as pdfjs's readBlock does). `strict`: refuse copies from before the start.
 */
export function* flate(input: ByteReader, strict: boolean): Generator<Uint8Array> {
  const cmf = input.byte();
  const flg = input.byte();
  if (cmf === -1 || flg === -1 || (cmf & 0x0f) !== 8 || ((cmf << 8) + flg) % 31 !== 0 || flg & 0x20) return;
  const window = new Uint8Array(65536);
  let total = 0;
  let out = new Uint8Array(CHUNK);
  let n = 0;
  let codeBuf = 0;
  let codeSize = 0;
  const getBits = (bits: number): number => {
    while (codeSize < bits) {
      const b = input.byte();
      if (b === -1) throw new FlateFormatError();
      codeBuf |= b << codeSize;
      codeSize += 8;
    }
    const v = codeBuf & ((1 << bits) - 1);
    codeBuf >>= bits;
    codeSize -= bits;
    return v;
  };
  const getCode = ([codes, maxLen]: Table): number => {
    while (codeSize < maxLen) {
      const b = input.byte();
      if (b === -1) break;
      codeBuf |= b << codeSize;
      codeSize += 8;
    }
    const code = codes[codeBuf & ((1 << maxLen) - 1)]!;
    const len = code >> 16;
    if (len < 1 || codeSize < len) throw new FlateFormatError();
    codeBuf >>= len;
    codeSize -= len;
    return code & 0xffff;
  };
  let eof = false;
  while (!eof) {
    try {
      let hdr = getBits(3);
      if (hdr & 1) eof = true;
      hdr >>= 1;
      if (hdr === 0) {
        const header = input.bytes(4);
        if (header.length < 4) throw new FlateFormatError();
        const blockLen = header[0]! | (header[1]! << 8);
        const check = header[2]! | (header[3]! << 8);
        if (check !== (~blockLen & 0xffff) && (blockLen !== 0 || check !== 0)) throw new FlateFormatError();
        codeBuf = 0;
        codeSize = 0;
        if (blockLen === 0) {
          if (input.peek() === -1) eof = true;
          continue;
        }
        const block = input.bytes(blockLen);
        for (const v of block) {
          window[total++ & 0xffff] = v;
          out[n++] = v;
          if (n === CHUNK) {
            yield out;
            out = new Uint8Array(CHUNK);
            n = 0;
          }
        }
        if (block.length < blockLen) eof = true;
        continue;
      }
      let lit: Table;
      let dist: Table;
      if (hdr === 1) {
        lit = fixedLit;
        dist = fixedDist;
      } else if (hdr === 2) {
        const numLitCodes = getBits(5) + 257;
        const numDistCodes = getBits(5) + 1;
        const numCodeLenCodes = getBits(4) + 4;
        const codeLenCodeLengths = new Uint8Array(codeLenCodeMap.length);
        for (let i = 0; i < numCodeLenCodes; ++i) codeLenCodeLengths[codeLenCodeMap[i]!] = getBits(3);
        const codeLenTable = huffmanTable(codeLenCodeLengths);
        let len = 0;
        const codes = numLitCodes + numDistCodes;
        const codeLengths = new Uint8Array(codes);
        for (let i = 0; i < codes; ) {
          const code = getCode(codeLenTable);
          let bitsLength: number, bitsOffset: number, what: number;
          if (code === 16) [bitsLength, bitsOffset, what] = [2, 3, len];
          else if (code === 17) [bitsLength, bitsOffset, what, len] = [3, 3, 0, 0];
          else if (code === 18) [bitsLength, bitsOffset, what, len] = [7, 11, 0, 0];
          else {
            codeLengths[i++] = len = code;
            continue;
          }
          const repeat = getBits(bitsLength) + bitsOffset;
          codeLengths.fill(what, i, i + repeat);
          i += repeat;
        }
        lit = huffmanTable(codeLengths.subarray(0, numLitCodes));
        dist = huffmanTable(codeLengths.subarray(numLitCodes, codes));
      } else throw new FlateFormatError();
      for (;;) {
        let code1 = getCode(lit);
        if (code1 < 256) {
          window[total++ & 0xffff] = code1;
          out[n++] = code1;
          if (n === CHUNK) {
            yield out;
            out = new Uint8Array(CHUNK);
            n = 0;
          }
          continue;
        }
        if (code1 === 256) break;
        code1 = lengthDecode[code1 - 257]!;
        let code2 = code1 >> 16;
        if (code2 > 0) code2 = getBits(code2);
        const len = (code1 & 0xffff) + code2;
        // pdfjs: distDecode[30 or 31] is undefined, which its arithmetic turns into a distance of 0
        code1 = distDecode[getCode(dist)] ?? 0;
        code2 = code1 >> 16;
        if (code2 > 0) code2 = getBits(code2);
        const distance = (code1 & 0xffff) + code2;
        if (strict && (distance > total || distance === 0)) throw new PdfUnaccountableError("a Flate stream copies bytes from before its start");
        if (n + len > CHUNK) {
          yield out.subarray(0, n);
          out = new Uint8Array(CHUNK);
          n = 0;
        }
        if (distance > 0 && distance <= total) {
          for (let k = 0, from = total - distance; k < len; ++k) {
            const v = window[from++ & 0xffff]!;
            window[total++ & 0xffff] = v;
            out[n++] = v;
          }
        } else {
          for (let k = 0; k < len; ++k) window[total++ & 0xffff] = out[n++] = 0;
        }
      }
    } catch (err) {
      if (!(err instanceof FlateFormatError)) throw err;
      eof = true;
    }
  }
  if (n) yield out.subarray(0, n);
}

/** pdfjs's LZWStream (12-bit codes at most, EarlyChange 1 by default), ported line for line. */
export function* lzw(input: ByteReader, earlyChange: number): Generator<Uint8Array> {
  let cachedData = 0;
  let bitsCached = 0;
  let eof = false;
  const readBits = (n: number): number | null => {
    while (bitsCached < n) {
      const c = input.byte();
      if (c === -1) {
        eof = true;
        return null;
      }
      cachedData = (cachedData << 8) | c;
      bitsCached += 8;
    }
    bitsCached -= n;
    return (cachedData >>> bitsCached) & ((1 << n) - 1);
  };
  const size = 4096;
  const dictionaryValues = new Uint8Array(size);
  const dictionaryLengths = new Uint16Array(size).fill(1, 0, 256);
  const dictionaryPrevCodes = new Uint16Array(size);
  const currentSequence = new Uint8Array(size);
  for (let i = 0; i < 256; i++) dictionaryValues[i] = i;
  let nextCode = 258;
  let codeLength = 9;
  let prevCode = 0;
  let currentSequenceLength = 0;
  // 512 codes per block, as pdfjs; one code yields at most a dictionary entry (< 4096 bytes)
  const block = new Uint8Array(512 * size);
  while (!eof) {
    let n = 0;
    for (let i = 0; i < 512; i++) {
      const code = readBits(codeLength);
      const hasPrev = currentSequenceLength > 0;
      if (code === null || code < 256) {
        currentSequence[0] = code ?? 0;
        currentSequenceLength = 1;
      } else if (code >= 258) {
        if (code < nextCode) {
          currentSequenceLength = dictionaryLengths[code]!;
          for (let j = currentSequenceLength - 1, q = code; j >= 0; j--) {
            currentSequence[j] = dictionaryValues[q]!;
            q = dictionaryPrevCodes[q]!;
          }
        } else currentSequence[currentSequenceLength++] = currentSequence[0]!;
      } else if (code === 256) {
        codeLength = 9;
        nextCode = 258;
        currentSequenceLength = 0;
        continue;
      } else {
        eof = true;
        break;
      }
      if (hasPrev) {
        dictionaryPrevCodes[nextCode] = prevCode;
        dictionaryLengths[nextCode] = dictionaryLengths[prevCode]! + 1;
        dictionaryValues[nextCode] = currentSequence[0]!;
        nextCode++;
        codeLength = (nextCode + earlyChange) & (nextCode + earlyChange - 1) ? codeLength : Math.min(Math.log(nextCode + earlyChange) / 0.6931471805599453 + 1, 12) | 0;
      }
      prevCode = code ?? 0;
      for (let j = 0; j < currentSequenceLength; j++) block[n++] = currentSequence[j] ?? 0;
    }
    if (n) yield block.slice(0, n);
  }
}

/** pdfjs's AsciiHexStream: hex digits, anything else skipped, `>` ends (read 256 bytes at a time, not 8,000: same output). */
export function* asciiHex(input: ByteReader): Generator<Uint8Array> {
  let firstDigit = -1;
  for (;;) {
    const bytes = input.bytes(256);
    if (!bytes.length) return;
    const out = new Uint8Array((bytes.length + 1) >> 1);
    let n = 0;
    let eof = false;
    for (const ch of bytes) {
      let digit: number;
      if (ch >= 0x30 && ch <= 0x39) digit = ch & 0x0f;
      else if ((ch >= 0x41 && ch <= 0x46) || (ch >= 0x61 && ch <= 0x66)) digit = (ch & 0x0f) + 9;
      else if (ch === 0x3e) {
        eof = true;
        break;
      } else continue;
      if (firstDigit < 0) firstDigit = digit;
      else {
        out[n++] = (firstDigit << 4) | digit;
        firstDigit = -1;
      }
    }
    if (firstDigit >= 0 && eof) out[n++] = firstDigit << 4;
    yield out.subarray(0, n);
    if (eof) return;
  }
}

const white = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;

/** pdfjs's Ascii85Stream: groups of five, `z` for four zeros, `~` or the end stops. */
export function* ascii85(input: ByteReader): Generator<Uint8Array> {
  const group = new Uint8Array(5);
  for (;;) {
    const out = new Uint8Array(4096);
    let n = 0;
    while (n <= out.length - 4) {
      let c = input.byte();
      while (white(c)) c = input.byte();
      if (c === -1 || c === 0x7e) {
        yield out.subarray(0, n);
        return;
      }
      if (c === 0x7a) {
        n += 4;
        continue;
      }
      group[0] = c;
      let i: number;
      for (i = 1; i < 5; ++i) {
        c = input.byte();
        while (white(c)) c = input.byte();
        group[i] = c;
        if (c === -1 || c === 0x7e) break;
      }
      const produced = i - 1;
      if (i < 5) group.fill(0x21 + 84, i, 5);
      let t = 0;
      for (let k = 0; k < 5; ++k) t = t * 85 + (group[k]! - 0x21);
      for (let k = 3; k >= 0; --k) {
        if (k < produced) out[n + k] = t & 0xff;
        t >>= 8;
      }
      n += produced;
      if (i < 5) {
        yield out.subarray(0, n);
        return;
      }
    }
    yield out.subarray(0, n);
  }
}

/** pdfjs's RunLengthStream: a length byte, then literal bytes or a repeated byte; 128 ends. */
export function* runLength(input: ByteReader): Generator<Uint8Array> {
  for (;;) {
    const header = input.bytes(2);
    if (header.length < 2 || header[0] === 128) return;
    const n = header[0]!;
    if (n < 128) {
      const out = new Uint8Array(n + 1);
      out[0] = header[1]!;
      out.set(input.bytes(n), 1); // pdfjs counts n bytes even when fewer are left (zeros)
      yield out;
    } else yield new Uint8Array(257 - n).fill(header[1]!);
  }
}
