// Finds the streams pdfjs could read in a PDF (or in a decoded object stream), as pdfjs's own lexer and parser would
// read them (pdfjs-dist's src/core/parser.js, Lexer and Parser, mirrored here for dictionaries only). A stream is a
// dictionary followed by the `stream` keyword; pdfjs reaches objects through the xref table, a reconstruction scan
// or an object stream's offsets, any of which an attacker controls, so EVERY `<<` in the bytes is tried as the start of
// a dictionary (memoised per position, so the whole scan stays linear). The data starts after the end of line that
// follows `stream` (CR, LF or CRLF, whatever precedes it on that line, as Lexer.skipToNextLine does); where it ends is
// left to the decoders (/Length and `endstream` can both lie).

export class PdfUnaccountableError extends Error {}

type Value = number | boolean | null | string | Name | Ref | Cmd | Value[] | Dict;
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
  constructor(cmd: string) {
    this.cmd = cmd;
  }
}
export type Dict = Map<string, Value>;

export interface PdfStream {
  dict: Dict;
  /** The first byte of the stream's data. */
  dataStart: number;
}

const EOF = Symbol("eof");
type Token = Value | typeof EOF;
class FormatError extends Error {}

// pdfjs's specialChars: 1 white space, 2 delimiter
const special = new Uint8Array(256);
for (const c of [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20]) special[c] = 1;
for (const c of "()<>[]{}/%") special[c.charCodeAt(0)] = 2;
const hexDigit = (ch: number) => (ch >= 0x30 && ch <= 0x39 ? ch & 0x0f : (ch >= 0x41 && ch <= 0x46) || (ch >= 0x61 && ch <= 0x66) ? (ch & 0x0f) + 9 : -1);
const MAX_DEPTH = 1000;

/** pdfjs's Lexer, as a pure function of a position: the token there and the position after it. */
function lex(b: Uint8Array, start: number): [Token, number] {
  const at = (i: number) => (i < b.length ? b[i]! : -1);
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
      let depth = 1;
      for (p++; ; p++) {
        const c = at(p);
        if (c < 0) return ["", p];
        if (c === 0x28) depth++;
        else if (c === 0x29 && --depth === 0) return ["", p + 1];
        else if (c === 0x5c && at(++p) < 0) return ["", p];
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
      return [new Cmd("["), p + 1];
    case 0x5d:
      return [new Cmd("]"), p + 1];
    case 0x7b:
      return [new Cmd("{"), p + 1];
    case 0x7d:
      return [new Cmd("}"), p + 1];
    case 0x3c:
      if (at(p + 1) === 0x3c) return [new Cmd("<<"), p + 2];
      for (p++; at(p) >= 0; p++) if (at(p) === 0x3e) return ["", p + 1];
      return ["", p];
    case 0x3e:
      return at(p + 1) === 0x3e ? [new Cmd(">>"), p + 2] : [new Cmd(">"), p + 1];
    case 0x29:
      throw new FormatError("illegal character");
  }
  if ((ch < 0x20 || ch > 0x7f) && at(p + 1) >= 0x20 && at(p + 1) <= 0x7f) return [new Cmd(String.fromCharCode(ch)), p + 1];
  let word = String.fromCharCode(ch);
  while ((ch = at(++p)) >= 0 && !special[ch]) {
    if (word.length === 128) throw new FormatError("command token too long");
    word += String.fromCharCode(ch);
  }
  if (word === "true") return [true, p];
  if (word === "false") return [false, p];
  if (word === "null") return [null, p];
  return [new Cmd(word), p];
}

const isCmd = (t: Token, cmd: string) => t instanceof Cmd && t.cmd === cmd;

/** Parses the bytes of one PDF buffer: dictionaries memoised by position (null: pdfjs would fail there). */
class Parser {
  private readonly dicts = new Map<number, [Dict, number] | null>();
  /** Bytes lexed so far, against a bound linear in the size (candidates that re-read the same bytes are refused). */
  private work = 0;
  private readonly maxWork: number;
  private readonly b: Uint8Array;
  constructor(b: Uint8Array) {
    this.b = b;
    this.maxWork = 64 * b.length + (16 << 20);
  }

  lex(pos: number): [Token, number] {
    const r = lex(this.b, pos);
    this.work += r[1] - pos + 1;
    if (this.work > this.maxWork) throw new PdfUnaccountableError("its objects take too long to read");
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

/** Every stream pdfjs could read in `b`: each `<<` tried as a dictionary followed by the `stream` keyword. */
export function findStreams(b: Uint8Array): PdfStream[] {
  const parser = new Parser(b);
  const found: PdfStream[] = [];
  for (let i = b.indexOf(0x3c); i >= 0 && i + 1 < b.length; i = b.indexOf(0x3c, i + 1)) {
    if (b[i + 1] !== 0x3c) continue;
    const d = parser.dict(i);
    if (!d) continue;
    let keyword: [Token, number];
    try {
      keyword = parser.lex(d[1]);
    } catch (err) {
      if (err instanceof FormatError) continue;
      throw err;
    }
    if (isCmd(keyword[0], "stream")) found.push({ dict: d[0], dataStart: nextLine(b, keyword[1]) });
  }
  return found;
}
