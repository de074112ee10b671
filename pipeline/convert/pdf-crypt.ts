// The Standard security handler's file key for the empty user password and the stream ciphers, as pdfjs-dist computes
// them (src/core/crypto.js: CipherTransformFactory, ARCFourCipher, AES128Cipher, AES256Cipher, PDF17, PDF20;
// Apache-2.0): pdfjs opens a PDF whose user password is empty without asking and decrypts every stream before
// decoding it, so a guard that counts decoded bytes must decrypt them the same way. RC4 is written here (Node's
// OpenSSL 3 may not have it); MD5, SHA-2 and AES-CBC are Node's.
import { createCipheriv, createDecipheriv, createHash } from "node:crypto";

export interface Cipher {
  kind: "rc4" | "aes128" | "aes256";
  key: Uint8Array;
}

const hash = (algorithm: string, ...parts: Uint8Array[]): Uint8Array => {
  const h = createHash(algorithm);
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};
export const md5 = (...parts: Uint8Array[]) => hash("md5", ...parts);

/** pdfjs's ARCFourCipher: one keystream, continued across calls. */
export class Rc4 {
  private readonly s = new Uint8Array(256);
  private a = 0;
  private b = 0;
  constructor(key: Uint8Array) {
    const s = this.s;
    for (let i = 0; i < 256; i++) s[i] = i;
    for (let i = 0, j = 0; i < 256; ++i) {
      const tmp = s[i]!;
      j = (j + tmp + key[i % key.length]!) & 0xff;
      s[i] = s[j]!;
      s[j] = tmp;
    }
  }
  update(data: Uint8Array): Uint8Array {
    const s = this.s;
    let { a, b } = this;
    const out = new Uint8Array(data.length);
    for (let i = 0; i < data.length; ++i) {
      a = (a + 1) & 0xff;
      const tmp = s[a]!;
      b = (b + tmp) & 0xff;
      const tmp2 = s[b]!;
      s[a] = tmp2;
      s[b] = tmp;
      out[i] = data[i]! ^ s[(tmp + tmp2) & 0xff]!;
    }
    [this.a, this.b] = [a, b];
    return out;
  }
}

/** The 32 bytes an empty (or short) password is padded with. */
export const PASSWORD_PAD = new Uint8Array([0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08, 0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a]);

/** `data` cut or padded with zeros to `n` bytes (pdfjs's calculateMD5 reads zeros past the end of its input). */
const sized = (data: Uint8Array, n: number) => {
  const out = new Uint8Array(n);
  out.set(data.subarray(0, n));
  return out;
};

export interface Rc4Params {
  /** /O and /U, their first 32 bytes. */
  o: Uint8Array;
  u: Uint8Array;
  p: number;
  r: number;
  keyBits: number;
  fileId: Uint8Array;
  encryptMetadata: boolean;
}

/** CipherTransformFactory#prepareKeyData for the empty password: the file key, or null (a password is needed). */
export function rc4FileKey({ o, u, p, r, keyBits, fileId, encryptMetadata }: Rc4Params): Uint8Array | null {
  const n = keyBits >> 3;
  const tail = r >= 4 && !encryptMetadata ? [new Uint8Array([0xff, 0xff, 0xff, 0xff])] : [];
  let digest = md5(PASSWORD_PAD, o, new Uint8Array([p & 0xff, (p >> 8) & 0xff, (p >> 16) & 0xff, (p >>> 24) & 0xff]), fileId, ...tail);
  if (r >= 3) for (let j = 0; j < 50; ++j) digest = md5(sized(digest, n));
  const key = digest.subarray(0, n);
  let check: Uint8Array;
  if (r >= 3) {
    check = new Rc4(key).update(md5(PASSWORD_PAD, fileId));
    for (let j = 1; j <= 19; ++j) check = new Rc4(key.map((k) => k ^ j)).update(check);
  } else check = new Rc4(key).update(PASSWORD_PAD);
  return check.every((c, k) => u[k] === c) ? key : null;
}

/** CipherTransformFactory#buildObjectKey: the key of object `num gen` (AESV2 salts it with "sAlT"). */
export function objectKey(fileKey: Uint8Array, num: number, gen: number, aes: boolean): Uint8Array {
  const id = [num & 0xff, (num >> 8) & 0xff, (num >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff, ...(aes ? [0x73, 0x41, 0x6c, 0x54] : [])];
  return md5(fileKey, new Uint8Array(id)).subarray(0, Math.min(fileKey.length + 5, 16));
}

const aesCbc = (bits: 128 | 256, key: Uint8Array, iv: Uint8Array, data: Uint8Array, encrypt: boolean): Uint8Array => {
  const c = encrypt ? createCipheriv(`aes-${bits}-cbc`, key, iv) : createDecipheriv(`aes-${bits}-cbc`, key, iv);
  c.setAutoPadding(false);
  return new Uint8Array(Buffer.concat([c.update(data), c.final()]));
};

/** PDF17 (R5: SHA-256) and PDF20 (R6: algorithm 2.B) password hashes. */
export function r6Hash(r: number, password: Uint8Array, input: Uint8Array, userBytes: Uint8Array): Uint8Array {
  let k = hash("sha256", input);
  if (r !== 6) return k;
  let e: Uint8Array = new Uint8Array([0]);
  for (let i = 0; i < 64 || e.at(-1)! > i - 32; i++) {
    const combined = Buffer.concat([password, k, userBytes]);
    e = aesCbc(128, k.subarray(0, 16), k.subarray(16, 32), Buffer.concat(Array<Uint8Array>(64).fill(combined)), true);
    let sum = 0;
    for (const v of e.subarray(0, 16)) sum += v;
    k = hash(["sha256", "sha384", "sha512"][sum % 3]!, e);
  }
  return k.subarray(0, 32);
}

/** CipherTransformFactory#createEncryptionKey20 for the empty password: the file key (32 bytes), or null. */
export function aes256FileKey(r: number, u: Uint8Array, ue: Uint8Array): Uint8Array | null {
  const none = new Uint8Array(0);
  if (u.length < 48 || !Buffer.from(r6Hash(r, none, u.subarray(32, 40), none)).equals(u.subarray(0, 32))) return null;
  if (ue.length !== 32) return null;
  return aesCbc(256, r6Hash(r, none, u.subarray(40, 48), none), new Uint8Array(16), ue, false);
}

/**
 * The decrypted bytes of a stream, chunk by chunk (RC4, or AES-CBC whose first 16 bytes are the IV). The padding of
 * the last AES block is left in: the data runs on to the end of the file here, and the decoders stop at their own end.
 */
export function* decrypt(source: Iterator<Uint8Array>, cipher: Cipher): Generator<Uint8Array> {
  if (cipher.kind === "rc4") {
    const rc4 = new Rc4(cipher.key);
    for (let r = source.next(); !r.done; r = source.next()) yield rc4.update(r.value);
    return;
  }
  let iv = new Uint8Array(0);
  let r = source.next();
  for (; !r.done && iv.length < 16; r = source.next()) iv = Buffer.concat([iv, r.value]);
  if (iv.length < 16) return;
  const d = createDecipheriv(cipher.kind === "aes128" ? "aes-128-cbc" : "aes-256-cbc", cipher.key, iv.subarray(0, 16));
  d.setAutoPadding(false);
  yield new Uint8Array(d.update(iv.subarray(16)));
  for (; !r.done; r = source.next()) yield new Uint8Array(d.update(r.value));
}
