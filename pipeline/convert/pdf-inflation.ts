// A PDF's compressed streams can decode to gigabytes (a 260 KB file with one FlateDecode stream of zeros took pdfjs
// 14 s and 330 MB here for 256 MB; four Flate layers, an LZW stream, a `stream` keyword followed by a lone CR each
// cost seconds and gigabytes before this guard read streams as pdfjs does). Before pdfjs sees a file, every stream
// pdfjs could read (pdf-objects.ts: the object after any `obj` keyword, when it is a dictionary followed by `stream`)
// is decoded through its whole filter chain by ports of pdfjs's own decoders (pdf-decoders.ts), from its first byte
// to the end of the file (so a /Length or an `endstream` that lies changes nothing: each decoder stops at its own end
// marker), counting every layer's output (nothing kept) against one budget for the file. A stream that may be an
// object stream (/N, /First) is kept once decoded and its objects searched in turn. Reading itself is bounded (4
// bytes read per byte of input): a file crafted to be re-read is refused, not read for minutes. What cannot be decoded
// as pdfjs would (an indirect /Filter, a predictor between two filters, a stream inside another object) is refused.
// An encrypted file (an RC4-40 one with 300 MB of Flate content passed unread) is read as pdfjs reads it with the
// empty user password: each stream decrypted first (pdf-encryption.ts, pdf-crypt.ts); one that needs a password is
// refused, as pdfjs cannot open it.
import { brotliDecompressSync } from "node:zlib";
import { PageError } from "../runtime/errors.ts";
import { type Cipher, decrypt } from "./pdf-crypt.ts";
import { ascii85, asciiHex, ByteReader, type Chunks, flate, lzw, runLength } from "./pdf-decoders.ts";
import { declaresEncryption, type Handler, objectIds, securityHandlers } from "./pdf-encryption.ts";
import { type Dict, findStreams, Name, objectStarts, objectStreamStarts, Parser, type PdfStream, PdfUnaccountableError, Ref, spend, type Work } from "./pdf-objects.ts";

/** Largest total decoded size of a PDF's streams, every filter layer counted. */
export const PDF_MAX_INFLATED_BYTES = 128 * 1024 * 1024;
/** Object streams inside decoded object streams, at most. */
const MAX_NESTING = 8;
/** Decoded bytes between two turns of the event loop. */
const YIELD_BYTES = 1024 * 1024;

export class PdfTooLargeError extends PageError {
  constructor(message: string) {
    super("SCRAPE_TOO_LARGE", message);
  }
}

interface Budget {
  left: number;
  readonly max: number;
  sinceYield: number;
  /** Bytes read (lexed, or fed to a first decoder), bounded linearly in the bytes to read. */
  work: Work;
}
/** Reading work allowed per byte of the file (and of each decoded object stream): legitimate files need about 2. */
const WORK_PER_BYTE = 4;

type Stage = (input: ByteReader, last: boolean, budget: Budget) => Iterator<Uint8Array> | null;

const brotli: Stage = (input, _last, budget) => {
  const all: Uint8Array[] = [];
  for (let c = input.bytes(1 << 20); c.length; c = input.bytes(1 << 20)) all.push(c);
  try {
    return [brotliDecompressSync(Buffer.concat(all), { maxOutputLength: Math.max(1, budget.left + 1) })].values();
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new PdfTooLargeError(`PDF streams decode to more than ${budget.max} bytes`);
    return null; // pdfjs fails on a broken Brotli stream too
  }
};

/** The decoders pdfjs's Parser.makeFilter applies, by filter name; null: pdfjs does not decode it to read text. */
function stageFor(name: string, params: unknown): Stage | "identity" | null {
  switch (name) {
    case "Fl":
    case "FlateDecode":
      return (input, last) => flate(input, !last);
    case "LZW":
    case "LZWDecode": {
      let earlyChange = 1;
      if (params instanceof Ref) throw new PdfUnaccountableError("an LZW stream's /DecodeParms is an indirect object");
      if (params instanceof Map && params.has("EarlyChange")) {
        const v = params.get("EarlyChange");
        if (typeof v !== "number") throw new PdfUnaccountableError("an LZW stream's /EarlyChange is not a number");
        earlyChange = v;
      }
      return (input) => lzw(input, earlyChange);
    }
    case "A85":
    case "ASCII85Decode":
      return (input) => ascii85(input);
    case "AHx":
    case "ASCIIHexDecode":
      return (input) => asciiHex(input);
    case "RL":
    case "RunLengthDecode":
      return (input) => runLength(input);
    case "BrotliDecode":
      return brotli;
    // images: decoded only to be painted, never to read text
    case "DCT":
    case "DCTDecode":
    case "JPX":
    case "JPXDecode":
    case "CCF":
    case "CCITTFaxDecode":
    case "JBIG2Decode":
      return null;
    default:
      return "identity"; // Crypt without a cipher (chain), and names pdfjs does not know, pass the bytes on unchanged
  }
}

/** A predictor (PNG, TIFF) rewrites bytes without growing them: harmless last, unaccountable between two filters. */
function hasPredictor(params: unknown): boolean {
  if (params instanceof Ref) return true;
  if (!(params instanceof Map)) return false;
  const p = params.get("Predictor");
  return p instanceof Ref || (typeof p === "number" && p > 1);
}

/** A /Crypt filter's stage: its cipher for these /DecodeParms (null: the bytes pass unchanged). */
type CryptStage = (params: unknown) => Cipher | null;

/** Stages whose output is not counted: decryption (as long as its input). */
const decryption = new WeakSet<Stage>();

function decryptStage(cipher: Cipher): Stage {
  const stage: Stage = (input) => decrypt(drain(input), cipher);
  decryption.add(stage);
  return stage;
}

function* drain(input: ByteReader): Generator<Uint8Array> {
  for (let c = input.bytes(65536); c.length; c = input.bytes(65536)) yield c;
}

/**
 * The stream's filter chain as pdfjs reads it (`F` before `Filter`, `DP` before `DecodeParms`), or null: no decoding.
 * A /Crypt filter decrypts with `crypt` (an encrypted file's), passes the bytes on otherwise.
 */
function chain(dict: Dict, crypt?: CryptStage): Stage[] | null {
  const filter = dict.get("F") ?? dict.get("Filter");
  const params = dict.get("DP") ?? dict.get("DecodeParms");
  if (filter instanceof Ref) throw new PdfUnaccountableError("a stream's /Filter is an indirect object");
  let names: Array<[string, unknown]>;
  if (filter instanceof Name) names = [[filter.name, params]];
  else if (Array.isArray(filter)) {
    names = [];
    for (const [i, f] of filter.entries()) {
      if (f instanceof Ref) throw new PdfUnaccountableError("a stream's /Filter names an indirect object");
      if (!(f instanceof Name)) return null; // pdfjs: "Bad filter name", the stream is not read
      names.push([f.name, Array.isArray(params) ? params[i] : null]);
    }
  } else return null;
  const stages: Stage[] = [];
  let predictor = false;
  for (const [name, p] of names) {
    const cipher = name === "Crypt" ? crypt?.(p) : null;
    const stage = cipher ? decryptStage(cipher) : stageFor(name, p);
    if (stage === null) break;
    if (stage === "identity") continue;
    if (predictor) throw new PdfUnaccountableError("a predictor between two filters");
    predictor = (name === "Fl" || name === "FlateDecode" || name === "LZW" || name === "LZWDecode") && hasPredictor(p);
    stages.push(stage);
  }
  return stages;
}

function* counted(source: Iterator<Uint8Array>, budget: Budget): Generator<Uint8Array> {
  for (let r = source.next(); !r.done; r = source.next()) {
    budget.left -= r.value.length;
    budget.sinceYield += r.value.length;
    if (budget.left < 0) throw new PdfTooLargeError(`PDF streams decode to more than ${budget.max} bytes`);
    yield r.value;
  }
}

/**
 * The data from `start` to the end, counted as reading work (a decoder that never ends costs its input), in chunks
 * growing from 64 bytes to 64 KiB so that a short stream costs about its own length.
 */
function* raw(bytes: Uint8Array, start: number, work: Work): Generator<Uint8Array> {
  for (let at = start, size = 64; at < bytes.length; at += size, size = Math.min(size * 2, 65536)) {
    const chunk = bytes.subarray(at, Math.min(bytes.length, at + size));
    spend(work, chunk.length);
    yield chunk;
  }
}

/** Decodes one stream to the end of `bytes` through its chain (decrypted first with `cipher`), counting; returns the output when `keep`. */
async function decode(bytes: Uint8Array, stream: PdfStream, stages: Stage[], budget: Budget, keep: boolean, cipher: Cipher | null = null): Promise<Uint8Array | null> {
  let source: Chunks = raw(bytes, stream.dataStart, budget.work);
  if (cipher) source = decrypt(source, cipher);
  for (const [i, stage] of stages.entries()) {
    const next = stage(new ByteReader(source), i === stages.length - 1, budget);
    if (!next) return null;
    source = decryption.has(stage) ? next : counted(next, budget);
  }
  const kept: Uint8Array[] = [];
  for (let r = source.next(); !r.done; r = source.next()) {
    if (keep) kept.push(r.value);
    if (budget.sinceYield > YIELD_BYTES) {
      budget.sinceYield = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return keep ? Buffer.concat(kept) : null;
}

const hasCrypt = (dict: Dict): boolean => {
  const f = dict.get("F") ?? dict.get("Filter");
  return Array.isArray(f) ? f.some((n) => n instanceof Name && n.name === "Crypt") : f instanceof Name && f.name === "Crypt";
};
const cipherId = (c: Cipher | null | undefined) => (c ? `${c.kind}:${Buffer.from(c.key).toString("hex")}` : "-");

/**
 * The file's streams as pdfjs reads them with a security handler: each decrypted with the key of its object number
 * (every number pdfjs could read before its `obj`), then decoded; those it would read unencrypted are skipped (the
 * scan without decryption counted them). Objects inside an object stream are not decrypted again.
 */
async function scanEncrypted(bytes: Uint8Array, starts: number[], budget: Budget, handler: Handler): Promise<void> {
  budget.work.left += WORK_PER_BYTE * bytes.length;
  const parser = new Parser(bytes, budget.work);
  for (const stream of findStreams(bytes, starts, budget.work)) {
    // decrypting alone never inflates (a stream without a decoding filter is not read to its end)
    if (!chain(stream.dict)?.length) continue;
    const ids = objectIds(parser, bytes, stream.objStart);
    if (!ids.length) throw new PdfUnaccountableError("an encrypted stream's object number cannot be read");
    const done = new Set<string>();
    for (const [num, gen] of ids) {
      const crypts: Array<Cipher | null> = [];
      const stages = chain(stream.dict, (params) => {
        const c = handler.cryptCipher(params, num, gen);
        crypts.push(c);
        return c;
      });
      const cipher = hasCrypt(stream.dict) ? null : handler.streamCipher(stream.dict, num, gen);
      const id = [cipher, ...crypts].map(cipherId).join(",");
      if (!stages || (!cipher && !crypts.some(Boolean)) || done.has(id)) continue;
      done.add(id);
      const objectStream = stream.dict.has("N") && stream.dict.has("First");
      const decoded = await decode(bytes, stream, stages, budget, objectStream, cipher);
      if (decoded) await scan(decoded, objectStreamStarts(stream.dict, decoded, budget.work), budget, 1);
    }
  }
}

/** Every stream read from `starts` in `bytes` decoded and counted; an object stream's objects in turn. */
async function scan(bytes: Uint8Array, starts: number[], budget: Budget, depth: number): Promise<void> {
  if (depth > MAX_NESTING) throw new PdfUnaccountableError(`object streams nested more than ${MAX_NESTING} deep`);
  budget.work.left += WORK_PER_BYTE * bytes.length;
  if (depth > 0) {
    budget.work.left += bytes.length;
    if (declaresEncryption(bytes, starts, budget.work)) throw new PdfUnaccountableError("an object stream holds an /Encrypt entry");
  }
  for (const stream of findStreams(bytes, starts, budget.work)) {
    const stages = chain(stream.dict);
    if (!stages?.length) continue; // not decoded: its bytes are in `bytes`, already searched
    // pdfjs reads any stream with integer /N and /First as an object stream, whose objects may be streams themselves
    const objectStream = stream.dict.has("N") && stream.dict.has("First");
    const decoded = await decode(bytes, stream, stages, budget, objectStream);
    if (decoded) await scan(decoded, objectStreamStarts(stream.dict, decoded, budget.work), budget, depth + 1);
  }
}

/**
 * Rejects with PdfTooLargeError (SCRAPE_TOO_LARGE) when the file's streams decode to more than `maxBytes` together,
 * and with SCRAPE_UNPARSEABLE when a stream cannot be decoded as pdfjs would decode it.
 */
export async function checkPdfInflation(bytes: Uint8Array, maxBytes = PDF_MAX_INFLATED_BYTES): Promise<void> {
  try {
    const budget = { left: maxBytes, max: maxBytes, sinceYield: 0, work: { left: 16 << 20 } };
    const starts = objectStarts(bytes);
    budget.work.left += WORK_PER_BYTE * bytes.length;
    const handlers = securityHandlers(bytes, starts, budget.work);
    // pdfjs reads the streams as they are (no trailer it takes declares encryption) or decrypted by the handler of the
    // trailer it takes: every way is counted, against one budget (decrypted with a wrong key, a stream decodes to nothing)
    await scan(bytes, starts, budget, 0);
    for (const handler of handlers) await scanEncrypted(bytes, starts, budget, handler);
  } catch (err) {
    if (err instanceof PdfUnaccountableError) throw new PageError("SCRAPE_UNPARSEABLE", `PDF refused: ${err.message}, so its decoded size cannot be counted`);
    throw err;
  }
}
