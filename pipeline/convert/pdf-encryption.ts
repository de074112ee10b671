// An encrypted PDF's security handlers as pdfjs reads them (src/core/xref.js XRef.parse, crypto.js
// CipherTransformFactory): the /Encrypt dictionary of a trailer (or of any dictionary pdfjs could take for one: an
// xref stream's, or an object's with /Root), the first /ID string, and from them the file key for the empty user
// password and the cipher of each stream. Which trailer pdfjs takes is the file's choice: every distinct handler found
// is returned, and the guard counts the streams once as read without decryption and once per handler.
import { PageError } from "../runtime/errors.ts";
import { aes256FileKey, type Cipher, objectKey, rc4FileKey } from "./pdf-crypt.ts";
import { type Dict, FormatError, isCmd, Name, Parser, PdfUnaccountableError, Ref, Str, type Work } from "./pdf-objects.ts";

/** Distinct security handlers a file may declare, at most (one in every real file). */
const MAX_HANDLERS = 4;

export interface Handler {
  /** The cipher pdfjs decrypts a stream with when its filters have no /Crypt (null: read as it is). */
  streamCipher(dict: Dict, num: number, gen: number): Cipher | null;
  /** The cipher of a /Crypt filter with these /DecodeParms. */
  cryptCipher(params: unknown, num: number, gen: number): Cipher | null;
}

/** pdfjs's Lexer.getString and getHexString: the bytes of the string token whose `(` or `<` is at `start`. */
export function strBytes(b: Uint8Array, start: number): Uint8Array {
  const out: number[] = [];
  let p = start + 1;
  if (b[start] === 0x3c) {
    let first = -1;
    for (; p < b.length && b[p] !== 0x3e; p++) {
      const c = b[p]!;
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1;
      if (d < 0) continue; // white space, or a character pdfjs warns about and skips
      if (first < 0) first = d;
      else {
        out.push((first << 4) | d);
        first = -1;
      }
    }
    if (first >= 0) out.push(first << 4);
    return new Uint8Array(out);
  }
  const escapes: Record<number, number> = { 0x6e: 0x0a, 0x72: 0x0d, 0x74: 0x09, 0x62: 0x08, 0x66: 0x0c };
  for (let depth = 1; p < b.length; p++) {
    const c = b[p]!;
    if (c === 0x28) depth++;
    else if (c === 0x29 && --depth === 0) break;
    if (c !== 0x5c) {
      out.push(c);
      continue;
    }
    const e = b[++p];
    if (e === undefined) break;
    if (e >= 0x30 && e <= 0x37) {
      let x = e & 0x0f;
      for (let n = 1; n < 3 && (b[p + 1] ?? 0) >= 0x30 && b[p + 1]! <= 0x37; n++) x = (x << 3) + (b[++p]! & 0x0f);
      out.push(x & 0xff);
    } else if (e === 0x0d) {
      if (b[p + 1] === 0x0a) p++;
    } else if (e !== 0x0a) out.push(escapes[e] ?? e);
  }
  return new Uint8Array(out);
}

const numeric = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e);

/**
 * The (object number, generation) pairs pdfjs could read before the `obj` keyword that ends at `start` (an xref offset
 * may point inside a number: `4 0 obj` is read in `14 0 obj`), each with whether its number is whole (`exact`).
 */
export function objectIds(parser: Parser, b: Uint8Array, start: number): Array<[number, number, boolean]> {
  const ids: Array<[number, number, boolean]> = [];
  for (let s = Math.max(0, start - 67); s < start - 3; s++) {
    if (!numeric(b[s])) continue;
    try {
      const [num, afterNum] = parser.lex(s);
      if (!Number.isInteger(num) || (num as number) < 0) continue;
      const [gen, afterGen] = parser.lex(afterNum);
      if (!Number.isInteger(gen) || (gen as number) < 0) continue;
      const [obj, end] = parser.lex(afterGen);
      if (isCmd(obj, "obj") && end === start && !ids.some(([n, g]) => n === num && g === gen)) ids.push([num as number, gen as number, !numeric(b[s - 1])]);
    } catch (err) {
      if (!(err instanceof FormatError)) throw err;
    }
  }
  return ids;
}

const bytesOf = (b: Uint8Array, v: unknown, what: string): Uint8Array => {
  if (!(v instanceof Str)) throw new PdfUnaccountableError(`its /Encrypt ${what} is not a direct string`);
  return strBytes(b, v.start);
};
const direct = (d: Dict | undefined, key: string): unknown => {
  const v = d?.get(key);
  if (v instanceof Ref) throw new PdfUnaccountableError(`its /Encrypt /${key} is an indirect object`);
  return v;
};
const nameIs = (v: unknown, name: string) => v instanceof Name && v.name === name;

/** CipherTransformFactory's constructor and createCipherTransform, for the empty password. */
function handler(b: Uint8Array, enc: Dict, fileId: Uint8Array): [Handler, string] | null {
  if (!nameIs(direct(enc, "Filter"), "Standard")) throw new PdfUnaccountableError("it is encrypted by a security handler other than /Standard");
  const v = direct(enc, "V");
  if (v !== 1 && v !== 2 && v !== 4 && v !== 5) throw new PdfUnaccountableError("its encryption algorithm (/V) is not supported");
  const cfValue = direct(enc, "CF");
  const cf = v >= 4 && cfValue instanceof Map ? cfValue : undefined;
  const stmf = (v >= 4 && direct(enc, "StmF")) || new Name("Identity");
  const eff = (v >= 4 && direct(enc, "EFF")) || stmf;
  let keyBits = direct(enc, "Length");
  if (!keyBits) {
    if (v <= 3) keyBits = 40;
    else if (cfValue instanceof Map && stmf instanceof Name) {
      const sub = direct(cfValue as Dict, stmf.name);
      keyBits = (sub instanceof Map && direct(sub as Dict, "Length")) || 128;
      if ((keyBits as number) < 40) keyBits = (keyBits as number) << 3;
    }
  }
  if (!Number.isInteger(keyBits) || (keyBits as number) < 40 || (keyBits as number) % 8 !== 0) throw new PdfUnaccountableError("its encryption key length is invalid");
  const o = bytesOf(b, direct(enc, "O"), "/O");
  const u = bytesOf(b, direct(enc, "U"), "/U");
  const r = direct(enc, "R") as number;
  const p = direct(enc, "P");
  const encryptMetadata = (v === 4 || v === 5) && direct(enc, "EncryptMetadata") !== false;
  let fileKey =
    v === 5
      ? aes256FileKey(r, u, bytesOf(b, direct(enc, "UE"), "/UE"))
      : rc4FileKey({ o: o.subarray(0, 32), u: u.subarray(0, 32), p: typeof p === "number" ? p : 0, r, keyBits: keyBits as number, fileId, encryptMetadata });
  if (!fileKey) {
    const authEvent = cf && eff instanceof Name ? direct(cf.get(eff.name) as Dict | undefined, "AuthEvent") : undefined;
    // pdfjs opens these without a key, and fails on every stream that needs one (none is read)
    if (v >= 4 && nameIs(stmf, "Identity") && nameIs(direct(enc, "StrF") || new Name("Identity"), "Identity") && nameIs(authEvent, "EFOpen")) return null;
    throw new PageError("SCRAPE_UNPARSEABLE", "PDF refused: it needs a password to be opened");
  }
  if (v === 4 && fileKey.length < 16) fileKey = Uint8Array.from({ length: 16 }, (_, i) => fileKey![i] ?? 0);
  const key = fileKey;
  const resolve = (name: unknown, num: number, gen: number): Cipher | null => {
    if (v < 4) return { kind: "rc4", key: objectKey(key, num, gen, false) };
    if (!(name instanceof Name)) return null; // pdfjs: "Invalid crypt filter name", the stream is not read
    const filter = cf?.get(name.name);
    if (filter instanceof Ref) throw new PdfUnaccountableError("a crypt filter is an indirect object");
    const cfm = direct(filter instanceof Map ? filter : undefined, "CFM");
    if (!cfm || nameIs(cfm, "None")) return null;
    if (v === 5 || nameIs(cfm, "AESV3")) return { kind: "aes256", key };
    if (nameIs(cfm, "V2")) return { kind: "rc4", key: objectKey(key, num, gen, false) };
    if (nameIs(cfm, "AESV2")) return { kind: "aes128", key: objectKey(key, num, gen, true) };
    return null; // pdfjs: "Unknown crypto method", the stream is not read
  };
  const cfmOf = (n: string) => ((cf?.get(n) as Dict | undefined)?.get?.("CFM") as Name | undefined)?.name;
  const signature = [v, Buffer.from(key).toString("hex"), ...[stmf, eff].map((n) => (n instanceof Name ? `${n.name}:${cfmOf(n.name)}` : "?")), ...[...(cf?.keys() ?? [])].map((n) => `${n}:${cfmOf(n)}`)].join("|");
  return [
    {
      streamCipher: (dict, num, gen) => resolve(v >= 4 && nameIs(dict.get("Type"), "EmbeddedFile") ? eff : stmf, num, gen),
      cryptCipher: (params, num, gen) => {
        const n = params instanceof Map ? params.get("Name") : null;
        return resolve(n instanceof Name ? n : new Name("Identity"), num, gen);
      },
    },
    signature,
  ];
}

/** The dictionary pdfjs reads at `pos`, if it reads one. */
function dictAt(parser: Parser, pos: number): Dict | null {
  try {
    const [t, after] = parser.lex(pos);
    return isCmd(t, "<<") ? (parser.dict(after - 2)?.[0] ?? null) : null;
  } catch (err) {
    if (err instanceof FormatError) return null;
    throw err;
  }
}

/**
 * Whether an object of a decoded object stream has /Encrypt: pdfjs, rebuilding a broken file, may take such an object
 * (one with /Root) for its trailer. No PDF writer puts one there; the guard refuses it.
 */
export function declaresEncryption(b: Uint8Array, starts: number[], work: Work): boolean {
  const parser = new Parser(b, work);
  return starts.some((s) => dictAt(parser, s)?.has("Encrypt"));
}

/** Every security handler a trailer pdfjs could take declares (none: the file is not encrypted). */
export function securityHandlers(b: Uint8Array, starts: number[], work: Work): Handler[] {
  const parser = new Parser(b, work);
  const trailers: Dict[] = [];
  const view = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let i = view.indexOf("trailer"); i >= 0; i = view.indexOf("trailer", i + 1)) {
    const [t, after] = parser.lex(i);
    const d = isCmd(t, "trailer") ? dictAt(parser, after) : null;
    if (d?.has("Encrypt")) trailers.push(d);
  }
  for (const s of starts) {
    const d = dictAt(parser, s);
    if (d?.has("Encrypt")) trailers.push(d);
  }
  const found = new Map<string, Handler>();
  const resolved = new Map<string, Array<[Dict, boolean]>>(); // by `num gen`: the trailers of an updated file share one /Encrypt
  for (const trailer of trailers) {
    const ids = trailer.get("ID");
    let fileId: Uint8Array = new Uint8Array(0);
    if (Array.isArray(ids) && ids.length) fileId = bytesOf(b, ids[0], "file /ID");
    else if (ids !== undefined && !(Array.isArray(ids) || ids === null)) throw new PdfUnaccountableError("its /ID is not an array");
    const enc = trailer.get("Encrypt");
    let dicts: Array<[Dict, boolean]> = [];
    if (enc instanceof Map) dicts = [[enc, true]];
    else if (enc instanceof Ref) {
      const known = resolved.get(`${enc.num} ${enc.gen}`);
      if (known) dicts = known;
      else {
        for (const s of starts) {
          const id = objectIds(parser, b, s).find(([n, g]) => n === enc.num && g === enc.gen);
          const d = id ? dictAt(parser, s) : null;
          if (d) dicts.push([d, id![2]]);
        }
        if (!dicts.length) throw new PdfUnaccountableError("its /Encrypt dictionary is not found");
        resolved.set(`${enc.num} ${enc.gen}`, dicts);
      }
    }
    for (const [d, exact] of dicts) {
      // read inside another object's number (`6 0 obj` in `16 0 obj`), a dictionary pdfjs cannot use makes it fail to
      // open the file (nothing is decoded): refused only when it is the object itself
      let h: ReturnType<typeof handler> = null;
      try {
        h = handler(b, d, fileId);
      } catch (err) {
        if (exact || !(err instanceof PdfUnaccountableError || err instanceof PageError)) throw err;
      }
      if (h && !found.has(h[1])) found.set(h[1], h[0]);
      if (found.size > MAX_HANDLERS) throw new PdfUnaccountableError("it declares too many security handlers");
    }
  }
  return [...found.values()];
}
