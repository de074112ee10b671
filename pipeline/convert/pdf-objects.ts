// Finds the streams pdfjs could read in a PDF (or in a decoded object stream), as pdfjs's own lexer and parser would
// read them (pdfjs-dist's src/core/parser.js, Lexer and Parser, mirrored here for dictionaries only). pdfjs reads an
// object after `num gen obj` (where an xref entry or its reconstruction scan points: both attacker-controlled, so
// every `obj` keyword in the bytes is taken) or at an object stream's offsets; the object is a stream when it is a
// dictionary followed by the `stream` keyword. The data starts after the end of line that follows `stream` (CR, LF or
// CRLF, whatever precedes it on that line, as Lexer.skipToNextLine does); where it ends is left to the decoders
// (/Length and `endstream` can both lie). Dictionaries are memoised per position, and all reading is counted (Work).

export class PdfUnaccountableError extends Error {}

type Value = number | boolean | null | Str | Name | Ref | Cmd | Value[] | Dict;
/** A string token: where it is in the buffer read (its `(` or `<` at `start`), decoded only when needed (pdf-encryption.ts). */
export class Str {
  readonly start: number;
  constructor(start: number) {
    this.start = start;
  }
}
export class Name {
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
}
export class Ref {
  readonly num: number;
  readonly gen: number;
  constructor(num: number, gen: number) {
    this.num = num;
    this.gen = gen;
  }
}
class Cmd {
  readonly cmd: string;
  private constructor(cmd: string) {
    this.cmd = cmd;
  }
  private static readonly known = new Map<string, Cmd>();
  static get(cmd: string): Cmd {
    let c = Cmd.known.get(cmd);
    if (!c) {
      c = new Cmd(cmd);
      if (Cmd.known.size < 1000) Cmd.known.set(cmd, c);
    }
    return c;
  }
}
export type Dict = Map<string, Value>;

export interface PdfStream {
  dict: Dict;
  /** The first byte of the stream's data. */
  dataStart: number;
  /** Where the object was read from (after its `obj` keyword, or an object stream's offset). */
  objStart: number;
}

const EOF = Symbol("eof");
type Token = Value | typeof EOF;
export class FormatError extends Error {}

// pdfjs's specialChars: 1 white space, 2 delimiter
const special = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) special[c] = 1;
for (const c of "()<>[]{}/%") special[c.charCodeAt(0)] = 2;
const hexDigit = (ch: number) => (ch >= 0x30 && ch <= 0x39 ? ch & 0x0f : (ch >= 0x41 && ch <= 0x46) || (ch >= 0x61 && ch <= 0x66) ? (ch & 0x0f) + 9 : -1);
const MAX_DEPTH = 1000;

/** pdfjs's Lexer, as a pure function of a position: the token there and the position after it. */
/** Reading work (bytes lexed, bytes fed to decoders) left for one file: a bound linear in its size. */
export interface Work {
  left: number;
}
export const spend = (work: Work, n: number): void => {
  work.left -= n;
  if (work.left < 0) throw new PdfUnaccountableError("it takes too long to read");
};

let lexed: Uint8Array = new Uint8Array(0); // the buffer lex() is reading (synchronously, one call at a time)
const at = (i: number): number => (i < lexed.length ? lexed[i]! : -1);

function lex(buffer: Uint8Array, start: number): [Token, number] {
  lexed = buffer;
  let p = start;
  let comment = false;
  for (;;) {
    const ch = at(p);
    if (ch < 0) return [EOF, p];
    if (comment) {
      if (ch === 0x0a || ch === 0x0d) comment = false;
    } else if (ch === 0x25) comment = true;
    else if (special[ch] !== 1) break;
    p++;
  }
  let ch = at(p);
  if ((ch >= 0x30 && ch <= 0x39) || ch === 0x2b || ch === 0x2d || ch === 0x2e) {
    let divideBy = 0;
    let sign = 1;
    if (ch === 0x2d) {
      sign = -1;
      ch = at(++p);
      if (ch === 0x2d) ch = at(++p);
    } else if (ch === 0x2b) ch = at(++p);
    while (ch === 0x0a || ch === 0x0d) ch = at(++p);
    if (ch === 0x2e) {
      divideBy = 10;
      ch = at(++p);
    }
    if (ch < 0x30 || ch > 0x39) {
      if (ch === 0x20 || ch === 0x09 || ch === 0x0d || ch === 0x0a || ch === 0x28 || ch === 0x3c || ch === -1) return [0, p];
      throw new FormatError("invalid number");
    }
    let value = ch - 0x30;
    while ((ch = at(++p)) >= 0) {
      if (ch >= 0x30 && ch <= 0x39) {
        if (divideBy !== 0) divideBy *= 10;
        value = value * 10 + ch - 0x30;
      } else if (ch === 0x2e) {
        if (divideBy === 0) divideBy = 1;
        else break;
      } else if (ch !== 0x2d) break;
    }
    return [sign * (divideBy ? value / divideBy : value), p];
  }
  switch (ch) {
    case 0x28: {
      const s = new Str(p);
      let depth = 1;
      for (p++; ; p++) {
        const c = at(p);
        if (c < 0) return [s, p];
        if (c === 0x28) depth++;
        else if (c === 0x29 && --depth === 0) return [s, p + 1];
        else if (c === 0x5c && at(++p) < 0) return [s, p];
      }
    }
    case 0x2f: {
      let name = "";
      for (p++; (ch = at(p)) >= 0 && !special[ch]; p++) {
        if (ch !== 0x23) {
          name += String.fromCharCode(ch);
          continue;
        }
        ch = at(++p);
        if (ch >= 0 && special[ch]) {
          name += "#";
          break;
        }
        const x = hexDigit(ch);
        if (x === -1) {
          name += "#" + String.fromCharCode(ch);
          continue;
        }
        const x2 = hexDigit(at(++p));
        if (x2 !== -1) {
          name += String.fromCharCode((x << 4) | x2);
          continue;
        }
        name += "#" + String.fromCharCode(ch);
        ch = at(p);
        if (ch < 0 || special[ch]) break;
        name += String.fromCharCode(ch);
      }
      return [new Name(name), p];
    }
    case 0x5b:
      return [Cmd.get("["), p + 1];
    case 0x5d:
      return [Cmd.get("]"), p + 1];
    case 0x7b:
      return [Cmd.get("{"), p + 1];
    case 0x7d:
      return [Cmd.get("}"), p + 1];
    case 0x3c:
      if (at(p + 1) === 0x3c) return [Cmd.get("<<"), p + 2];
      for (const s = new Str(p++); ; p++) if (at(p) < 0 || at(p) === 0x3e) return [s, at(p) < 0 ? p : p + 1];
    case 0x3e:
      return at(p + 1) === 0x3e ? [Cmd.get(">>"), p + 2] : [Cmd.get(">"), p + 1];
    case 0x29:
      throw new FormatError("illegal character");
  }
  if ((ch < 0x20 || ch > 0x7f) && at(p + 1) >= 0x20 && at(p + 1) <= 0x7f) return [Cmd.get(String.fromCharCode(ch)), p + 1];
  let word = String.fromCharCode(ch);
  while ((ch = at(++p)) >= 0 && !special[ch]) {
    if (word.length === 128) throw new FormatError("command token too long");
    word += String.fromCharCode(ch);
  }
  if (word === "true") return [true, p];
  if (word === "false") return [false, p];
  if (word === "null") return [null, p];
  return [Cmd.get(word), p];
}

export const isCmd = (t: unknown, cmd: string): boolean => t instanceof Cmd && t.cmd === cmd;

/** Parses the bytes of one PDF buffer: dictionaries memoised by position (null: pdfjs would fail there). */
export class Parser {
  private readonly dicts = new Map<number, [Dict, number] | null>();
  private readonly b: Uint8Array;
  private readonly work: Work;
  constructor(b: Uint8Array, work: Work) {
    this.b = b;
    this.work = work;
  }

  /** A token, its cost counted (candidates that re-read the same bytes end in a refusal, not in quadratic time). */
  lex(pos: number): [Token, number] {
    const r = lex(this.b, pos);
    spend(this.work, r[1] - pos + 1);
    return r;
  }

  /** pdfjs's Parser.getObj from `pos` (its buf1/buf2 lookahead, refs `n g R`): the value and the position after it. */
  value(pos: number, depth: number): [Value, number] {
    if (depth > MAX_DEPTH) throw new PdfUnaccountableError("objects nested more than 1000 deep");
    const [t, next] = this.lex(pos);
    if (t === EOF) throw new FormatError("end of file");
    if (isCmd(t, "<<")) {
      const d = this.dict(pos, depth + 1);
      if (!d) throw new FormatError("bad dictionary");
      return d;
    }
    if (isCmd(t, "[")) {
      const array: Value[] = [];
      let p = next;
      for (;;) {
        const [u, after] = this.lex(p);
        if (u === EOF) throw new FormatError("end of file inside array");
        if (isCmd(u, "]")) return [array, after];
        const [v, end] = this.value(p, depth + 1);
        if (this.streamFollows(v, end)) {
          // `… obj << … >> stream` read from inside an array is a real object read from the wrong start: pdfjs fails there
          if (isCmd(array.at(-1) ?? null, "obj")) throw new FormatError("an object inside an array");
          throw new PdfUnaccountableError("a stream inside another object");
        }
        array.push(v);
        p = end;
      }
    }
    if (Number.isInteger(t)) {
      const [gen, afterGen] = this.lex(next);
      if (Number.isInteger(gen)) {
        const [r, afterR] = this.lex(afterGen);
        if (isCmd(r, "R")) return [new Ref(t as number, gen as number), afterR];
      }
    }
    return [t, next];
  }

  /**
   * pdfjs makes a stream of a dictionary followed by `stream` even inside another object, and reads on after its end
   * (from /Length, which may be indirect, or the first `endstream`): not followed here, so the object is refused. No
   * PDF writer does this, and a real stream object is never a dictionary's value (`obj` precedes it, not a name).
   */
  private streamFollows(v: Value, end: number): boolean {
    return v instanceof Map && isCmd(this.lex(end)[0], "stream");
  }

  /** The dictionary whose `<<` starts at `pos` and the position after its `>>`, or null. */
  dict(pos: number, depth = 0): [Dict, number] | null {
    const known = this.dicts.get(pos);
    if (known !== undefined) return known;
    let result: [Dict, number] | null = null;
    try {
      const d: Dict = new Map();
      let p = this.lex(pos)[1];
      for (;;) {
        const [t, next] = this.lex(p);
        if (t === EOF) throw new FormatError("end of file inside dictionary");
        if (isCmd(t, ">>")) {
          result = [d, next];
          break;
        }
        if (isCmd(t, "<<")) {
          // a `<<` where a key should be is skipped; the tokens after it are the body of the dictionary that starts
          // there, already read (memoised) or read once now: a chain of them costs its length, not its square
          if (depth > MAX_DEPTH) throw new PdfUnaccountableError("objects nested more than 1000 deep");
          const rest = this.dict(p, depth + 1);
          if (!rest) throw new FormatError("bad dictionary");
          for (const [k, v] of rest[0]) d.set(k, v);
          result = [d, rest[1]];
          break;
        }
        if (!(t instanceof Name)) {
          p = next;
          continue;
        }
        if (this.lex(next)[0] === EOF) throw new FormatError("end of file inside dictionary");
        const [v, end] = this.value(next, depth + 1);
        if (this.streamFollows(v, end)) throw new PdfUnaccountableError("a stream inside another object");
        d.set(t.name, v);
        p = end;
      }
    } catch (err) {
      if (!(err instanceof FormatError)) throw err;
    }
    this.dicts.set(pos, result);
    return result;
  }
}

/** Lexer.skipToNextLine from `p`: the position after the first CR, LF or CRLF at or after it. */
function nextLine(b: Uint8Array, p: number): number {
  for (; p < b.length; p++) {
    if (b[p] === 0x0d) return b[p + 1] === 0x0a ? p + 2 : p + 1;
    if (b[p] === 0x0a) return p + 1;
  }
  return b.length;
}

/**
 * Where pdfjs starts reading objects in a file: after each `obj` keyword (an xref entry or pdfjs's reconstruction scan
 * points at `num gen obj`; every `obj` in the bytes is taken, wherever it is).
 */
export function objectStarts(bytes: Uint8Array): number[] {
  const starts: number[] = [];
  const obj = Buffer.from("obj");
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = view.indexOf(obj); i >= 0; i = view.indexOf(obj, i + 1)) {
    // ended by a white space or a delimiter; whatever precedes it (`0.obj` is `0.` then `obj` to pdfjs's lexer, and
    // a start too many only costs a token)
    const after = i + 3 < bytes.length ? bytes[i + 3]! : 0x20;
    if (special[after]) starts.push(i + 3);
  }
  return starts;
}

/**
 * Where pdfjs reads the objects of an object stream (XRef.fetchCompressed): `/N` pairs of integers (number, offset)
 * from its start, each object at `/First` + offset. N and First must be direct integers here.
 */
export function objectStreamStarts(dict: Dict, decoded: Uint8Array, work: Work): number[] {
  const n = dict.get("N");
  const first = dict.get("First");
  if (!Number.isInteger(n) || !Number.isInteger(first)) throw new PdfUnaccountableError("an object stream's /N or /First is not a direct integer");
  const parser = new Parser(decoded, work);
  const starts: number[] = [];
  let p = 0;
  try {
    for (let i = 0; i < (n as number); i++) {
      const [num, afterNum] = parser.lex(p);
      const [offset, afterOffset] = parser.lex(afterNum);
      if (!Number.isInteger(num) || !Number.isInteger(offset)) return []; // pdfjs fails the object stream
      starts.push((first as number) + (offset as number));
      p = afterOffset;
    }
  } catch (err) {
    if (err instanceof FormatError) return [];
    throw err;
  }
  return starts.filter((s) => s >= 0 && s < decoded.length);
}

/** The streams pdfjs would find reading an object at each of `starts` in `b`: a dictionary followed by `stream`. */
export function* findStreams(b: Uint8Array, starts: number[], work: Work): Generator<PdfStream> {
  const parser = new Parser(b, work);
  for (const start of starts) {
    let found: PdfStream | null = null;
    try {
      const [first, afterFirst] = parser.lex(start);
      if (!isCmd(first, "<<")) continue;
      const d = parser.dict(afterFirst - 2);
      if (!d) continue;
      const [keyword, afterKeyword] = parser.lex(d[1]);
      if (isCmd(keyword, "stream")) found = { dict: d[0], dataStart: nextLine(b, afterKeyword), objStart: start };
    } catch (err) {
      if (!(err instanceof FormatError)) throw err;
    }
    if (found) yield found;
  }
}
