// Encrypted PDFs (Standard security handler, empty user password, owner password "owner"), built here as PDF writers
// encrypt them: pdfjs opens them without asking and decrypts every stream before inflating it, so the guard must count
// what the decrypted streams inflate to. pdfjs reading each file's text back shows the encryption is real and that the
// guard's decryption matches pdfjs's.
import { createCipheriv } from "node:crypto";
import { deflateSync } from "node:zlib";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";
import { describe, expect, it } from "vitest";
import { deflatedZeros } from "../../test/fixtures/pdf.ts";
import { md5, objectKey, PASSWORD_PAD, r6Hash, Rc4 } from "./pdf-crypt.ts";
import { checkPdfInflation, PdfTooLargeError } from "./pdf-inflation.ts";
import { pdfToMarkdown } from "./pdf.ts";

type Kind = "RC4-40" | "RC4-128" | "AESV2" | "AESV3";
const latin1 = (s: string) => Buffer.from(s, "latin1");
const hex = (b: Uint8Array) => `<${Buffer.from(b).toString("hex")}>`;
/** A literal string, every byte outside printable ASCII as an octal escape (pdfjs's getString reads it back). */
const literal = (b: Uint8Array) => `(${[...b].map((c) => (c < 0x20 || c > 0x7e ? `\\${c.toString(8).padStart(3, "0")}` : "()\\".includes(String.fromCharCode(c)) ? `\\${String.fromCharCode(c)}` : String.fromCharCode(c))).join("")})`;
const pad = (password: string) => Buffer.concat([latin1(password), PASSWORD_PAD]).subarray(0, 32);
const aes = (bits: number, key: Uint8Array, iv: Uint8Array, data: Uint8Array, padding = true) => {
  const c = createCipheriv(`aes-${bits}-cbc`, key, iv);
  c.setAutoPadding(padding);
  return Buffer.concat([c.update(data), c.final()]);
};
const P = -3904;
const FILE_ID = Buffer.from("0123456789abcdef0123456789abcdef", "hex");
const IV = Buffer.alloc(16, 7); // fixed, so that every run writes the same bytes

/** Algorithms 2, 3, 4 and 5 (PDF 1.7, 7.6.4.3): the file key, /O and /U for revisions 2 to 4. */
function rc4Keys(r: number, bits: number, user: string, owner: string, encryptMetadata = true) {
  const n = bits >> 3;
  let h = md5(pad(owner));
  if (r >= 3) for (let i = 0; i < 50; i++) h = md5(h.subarray(0, n));
  let o = new Rc4(h.subarray(0, n)).update(pad(user));
  if (r >= 3) for (let i = 1; i <= 19; i++) o = new Rc4(h.subarray(0, n).map((k) => k ^ i)).update(o);
  const p = Buffer.alloc(4);
  p.writeInt32LE(P);
  let key = md5(pad(user), o, p, FILE_ID, ...(r >= 4 && !encryptMetadata ? [Buffer.alloc(4, 0xff)] : []));
  if (r >= 3) for (let i = 0; i < 50; i++) key = md5(key.subarray(0, n));
  key = key.subarray(0, n);
  let u: Uint8Array;
  if (r >= 3) {
    u = new Rc4(key).update(md5(PASSWORD_PAD, FILE_ID));
    for (let i = 1; i <= 19; i++) u = new Rc4(key.map((k) => k ^ i)).update(u);
    u = Buffer.concat([u, Buffer.alloc(16)]);
  } else u = new Rc4(key).update(PASSWORD_PAD);
  return { key, o, u };
}

/** Algorithms 8, 9 and 10 (PDF 2.0, 7.6.4.4): /U, /UE, /O, /OE and /Perms for revision 6. */
function aes256Keys(user: string, owner: string) {
  const key = Buffer.alloc(32, 0x5a);
  const [uvs, uks, ovs, oks] = [1, 2, 3, 4].map((i) => Buffer.alloc(8, i)) as [Buffer, Buffer, Buffer, Buffer];
  const none = new Uint8Array(0);
  const u = Buffer.concat([r6Hash(6, latin1(user), uvs, none), uvs, uks]);
  const ue = aes(256, r6Hash(6, latin1(user), uks, none), Buffer.alloc(16), key, false);
  const o = Buffer.concat([r6Hash(6, latin1(owner), Buffer.concat([ovs, u]), u), ovs, oks]);
  const oe = aes(256, r6Hash(6, latin1(owner), Buffer.concat([oks, u]), u), Buffer.alloc(16), key, false);
  const perms = Buffer.alloc(16);
  perms.writeInt32LE(P);
  perms.fill(0xff, 4, 8);
  perms.write("Tadb", 8, "latin1");
  const e = createCipheriv("aes-256-ecb", key, null);
  e.setAutoPadding(false);
  return { key, u, ue, o, oe, perms: Buffer.concat([e.update(perms), e.final()]) };
}

/**
 * A one-page PDF whose page content (object `contentNum`, Flate) is `deflated`, encrypted by `kind`; its /Encrypt
 * dictionary is object 6 (`filter`: its /Filter). AESV2 options: `encryptMetadata` false (in the key), `cryptFilter` (the
 * stream is decrypted by its /Crypt filter, streams are /Identity by default).
 */
function encryptedPdf(kind: Kind, deflated: Uint8Array, { user = "", contentNum = 4, filter = "Standard", extra = [] as Buffer[], encryptMetadata = true, cryptFilter = false } = {}): Buffer {
  let encrypt: string;
  let filters = "/Filter /FlateDecode";
  let data: Uint8Array;
  if (kind === "AESV3") {
    const k = aes256Keys(user, "owner");
    encrypt = `/V 5 /R 6 /Length 256 /CF << /StdCF << /CFM /AESV3 /AuthEvent /DocOpen /Length 32 >> >> /StmF /StdCF /StrF /StdCF /O ${hex(k.o)} /U ${hex(k.u)} /OE ${hex(k.oe)} /UE ${hex(k.ue)} /Perms ${hex(k.perms)}`;
    data = Buffer.concat([IV, aes(256, k.key, IV, deflated)]);
  } else {
    const [r, bits] = kind === "RC4-40" ? [2, 40] : kind === "RC4-128" ? [3, 128] : [4, 128];
    const k = rc4Keys(r, bits, user, "owner", encryptMetadata);
    if (kind === "AESV2") {
      encrypt = `/V 4 /R 4 /Length 128 /CF << /StdCF << /CFM /AESV2 /AuthEvent /DocOpen /Length 16 >> >> /StmF /${cryptFilter ? "Identity" : "StdCF"} /StrF /StdCF /O ${hex(k.o)} /U ${hex(k.u)}${encryptMetadata ? "" : " /EncryptMetadata false"}`;
      if (cryptFilter) filters = "/Filter [/Crypt /FlateDecode] /DecodeParms [<< /Type /CryptFilterDecodeParms /Name /StdCF >> null]";
      data = Buffer.concat([IV, aes(128, objectKey(k.key, contentNum, 0, true), IV, deflated)]);
    } else {
      // revision 2 with literal strings (escapes), revision 3 with hex strings
      const str = r === 2 ? literal : hex;
      encrypt = `/V ${r === 2 ? 1 : 2} /R ${r}${r === 2 ? "" : ` /Length ${bits}`} /O ${str(k.o)} /U ${str(k.u)}`;
      data = new Rc4(objectKey(k.key, contentNum, 0, false)).update(deflated);
    }
  }
  const objects = new Map<number, Buffer>([
    [1, latin1("<< /Type /Catalog /Pages 2 0 R >>")],
    [2, latin1("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")],
    [3, latin1(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents ${contentNum} 0 R >>`)],
    [contentNum, Buffer.concat([latin1(`<< /Length ${data.length} ${filters} >>\nstream\n`), data, latin1("\nendstream")])],
    [5, latin1("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")],
    [6, latin1(`<< /Filter /${filter} /P ${P} ${encrypt} >>`)],
    ...extra.map((o, i): [number, Buffer] => [Math.max(6, contentNum) + 1 + i, o]),
  ]);
  const size = Math.max(...objects.keys()) + 1;
  const parts: Buffer[] = [latin1("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")];
  let offset = parts[0]!.length;
  let xref = `xref\n0 ${size}\n0000000000 65535 f \n`;
  for (let num = 1; num < size; num++) {
    xref += `${String(offset).padStart(10, "0")} 00000 n \n`;
    const b = Buffer.concat([latin1(`${num} 0 obj\n`), objects.get(num) ?? latin1("null"), latin1("\nendobj\n")]);
    parts.push(b);
    offset += b.length;
  }
  parts.push(latin1(`${xref}trailer\n<< /Size ${size} /Root 1 0 R /Encrypt 6 0 R /ID [${hex(FILE_ID)} ${hex(FILE_ID)}] >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const KINDS: Array<[Kind, number]> = [
  ["RC4-40", 4],
  ["RC4-128", 4],
  ["AESV2", 14], // object 14: pdfjs would also read `4 0 obj` in `14 0 obj` (both keys are tried)
  ["AESV3", 4],
];
const BOMB = 8 << 20;

describe("encrypted PDFs (empty user password)", () => {
  it.each(KINDS)("%s: a Flate bomb in an encrypted content stream is counted decrypted, and refused one byte over the budget", async (kind, contentNum) => {
    const pdf = encryptedPdf(kind, await deflatedZeros(BOMB >> 20), { contentNum });
    expect(pdf.length).toBeLessThan(20_000);
    await expect(checkPdfInflation(pdf, BOMB - 1)).rejects.toBeInstanceOf(PdfTooLargeError);
    await expect(checkPdfInflation(pdf, BOMB)).resolves.toBeUndefined();
  }, 30_000);

  it.each(KINDS)("%s: the same file with a small text converts through pdfjs, which reads the text back", async (kind, contentNum) => {
    const content = latin1(`BT /F1 18 Tf 72 720 Td (Encrypted with ${kind}) Tj ET`);
    const pdf = encryptedPdf(kind, deflateSync(content), { contentNum });
    expect(pdf.includes(latin1("Encrypted with"))).toBe(false);
    await expect(checkPdfInflation(pdf, content.length - 1)).rejects.toBeInstanceOf(PdfTooLargeError);
    expect((await pdfToMarkdown(pdf, undefined, content.length)).markdown).toBe(`Encrypted with ${kind}`);
  }, 30_000);

  it.each([
    ["/EncryptMetadata false", { encryptMetadata: false }],
    ["a /Crypt filter (streams /Identity by default)", { cryptFilter: true }],
  ])("AESV2 with %s: a bomb is refused one byte over, a text is read back by pdfjs", async (_, options) => {
    const bomb = encryptedPdf("AESV2", await deflatedZeros(BOMB >> 20), options);
    await expect(checkPdfInflation(bomb, BOMB - 1)).rejects.toBeInstanceOf(PdfTooLargeError);
    await expect(checkPdfInflation(bomb, BOMB)).resolves.toBeUndefined();
    const content = latin1("BT /F1 18 Tf 72 720 Td (Still encrypted) Tj ET");
    const pdf = encryptedPdf("AESV2", deflateSync(content), options);
    await expect(checkPdfInflation(pdf, content.length - 1)).rejects.toBeInstanceOf(PdfTooLargeError);
    expect((await pdfToMarkdown(pdf, undefined, content.length)).markdown).toBe("Still encrypted");
  }, 30_000);

  it("streams that are only decrypted (images, no decoding filter) are not read to the end of the file", async () => {
    // 100 JPEG-like streams of 40 KB: decrypted to the end of the file each, their reading would pass the bound
    const jpeg = (i: number) => Buffer.concat([latin1("<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /BitsPerComponent 8 /ColorSpace /DeviceGray /Filter /DCTDecode /Length 40000 >>\nstream\n"), Buffer.alloc(40_000, i), latin1("\nendstream")]);
    const pdf = encryptedPdf("RC4-128", deflateSync("BT ET"), { extra: Array.from({ length: 100 }, (_, i) => jpeg(i)) });
    expect(pdf.length).toBeGreaterThan(4_000_000);
    await expect(checkPdfInflation(pdf, 1024)).resolves.toBeUndefined();
  }, 30_000);

  it("an /Encrypt inside an object stream (pdfjs rebuilding a broken file may take it for the trailer) is refused", async () => {
    const objects = deflateSync("20 0 << /Root 1 0 R /Encrypt 6 0 R >>");
    const objStm = Buffer.concat([latin1(`<< /Type /ObjStm /N 1 /First 5 /Filter /FlateDecode /Length ${objects.length} >>\nstream\n`), objects, latin1("\nendstream")]);
    await expect(checkPdfInflation(encryptedPdf("RC4-128", deflateSync("BT ET"), { extra: [objStm] }))).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE", message: expect.stringMatching(/object stream holds an \/Encrypt/) });
  });

  it("a PDF that needs a user password is refused as unparseable, as pdfjs fails to open it", async () => {
    for (const kind of ["RC4-128", "AESV3"] as const) {
      const pdf = encryptedPdf(kind, deflateSync("BT /F1 18 Tf 72 720 Td (Hidden) Tj ET"), { user: "secret" });
      await expect(getDocument({ data: new Uint8Array(pdf), verbosity: 0 }).promise).rejects.toMatchObject({ name: "PasswordException" });
      await expect(checkPdfInflation(pdf)).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE", message: expect.stringMatching(/password/) });
    }
  }, 30_000);

  it("a security handler other than /Standard is refused", async () => {
    const pdf = encryptedPdf("RC4-128", deflateSync("BT ET"), { filter: "Adobe.PubSec" });
    await expect(checkPdfInflation(pdf)).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE", message: expect.stringMatching(/other than \/Standard/) });
  });
});
