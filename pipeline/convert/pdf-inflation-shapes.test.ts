// PDFs crafted so that a guard reading streams differently from pdfjs would miss what pdfjs decodes (issue 50,
// finding 4): each shape carries a text content stream that pdfjs is shown to decode whole, and the guard is shown to
// count at least as many bytes (it refuses one byte below). Built here, never committed.
import { deflateRawSync, deflateSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { checkPdfInflation } from "./pdf-inflation.ts";
import { pdfToMarkdown } from "./pdf.ts";
import { lzwEncode, lzwZeros } from "../../test/fixtures/pdf-lzw.ts";

const latin1 = (s: string) => Buffer.from(s, "latin1");

/** A one-page PDF whose page content is object 4, given whole (dictionary, keyword, data, endstream), plus `extra` objects. */
function pdfWith(contents: Buffer, extra: string[] = []): Buffer {
  const objects: Buffer[] = [
    latin1("<< /Type /Catalog /Pages 2 0 R >>"),
    latin1("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
    latin1("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"),
    contents,
    latin1("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
    ...extra.map(latin1),
  ];
  const parts: Buffer[] = [latin1("%PDF-1.7\n")];
  const offsets: number[] = [];
  let offset = parts[0]!.length;
  objects.forEach((o, i) => {
    offsets.push(offset);
    const b = Buffer.concat([latin1(`${i + 1} 0 obj\n`), o, latin1("\nendobj\n")]);
    parts.push(b);
    offset += b.length;
  });
  let xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) xref += `${String(o).padStart(10, "0")} 00000 n \n`;
  parts.push(latin1(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${offset}\n%%EOF\n`));
  return Buffer.concat(parts);
}

const stream = (dict: string, data: Buffer, eol = "\n") => Buffer.concat([latin1(`<< /Length ${data.length} ${dict} >>\nstream${eol}`), data, latin1("\nendstream")]);

/** A content stream showing `n` letters A (at a size that keeps them all on the page, where pdfjs reads them). */
function text(n: number): Buffer {
  return latin1(`BT /F1 0.001 Tf 10 700 Td (${"A".repeat(n)}) Tj ET`);
}
const N = 50_000;
const TEXT = text(N);

function layers(data: Buffer, n: number): Buffer {
  for (let i = 0; i < n; i++) data = deflateSync(data);
  return data;
}

function ascii85(data: Buffer): Buffer {
  let s = "";
  for (let i = 0; i < data.length; i += 4) {
    const group = Buffer.alloc(4);
    data.copy(group, 0, i, i + 4);
    const n = Math.min(4, data.length - i);
    let v = group.readUInt32BE(0);
    if (n === 4 && v === 0) {
      s += "z";
      continue;
    }
    const chars: string[] = [];
    for (let k = 0; k < 5; k++) {
      chars.unshift(String.fromCharCode(33 + (v % 85)));
      v = Math.floor(v / 85);
    }
    s += chars.slice(0, n + 1).join("");
  }
  return latin1(s + "~>");
}

function runLength(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < data.length; i += 128) {
    const run = data.subarray(i, i + 128);
    parts.push(Buffer.from([run.length - 1]), run);
  }
  return Buffer.concat([...parts, Buffer.from([128])]);
}

/** What pdfjs reads from the page: the number of letters A. */
async function pdfjsReads(bytes: Buffer): Promise<number> {
  const { markdown } = await pdfToMarkdown(new Uint8Array(bytes), undefined, 1 << 30);
  return markdown.split("A").length - 1;
}

/** The guard counts at least `size` bytes: it refuses the file one byte below. */
async function guardCounts(bytes: Buffer, size: number): Promise<void> {
  await expect(checkPdfInflation(new Uint8Array(bytes), size - 1)).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
}

const zlibHeader = (cmf: number) => {
  for (let flg = 0; flg < 256; flg++) if (((cmf << 8) + flg) % 31 === 0 && !(flg & 0x20)) return Buffer.from([cmf, flg]);
  throw new Error("no FCHECK");
};

describe("the PDF guard decodes streams as pdfjs does (issue 50, finding 4)", () => {
  const shapes: Array<[string, Buffer]> = [
    ["five Flate layers", pdfWith(stream("/Filter [/FlateDecode /FlateDecode /FlateDecode /FlateDecode /FlateDecode]", layers(TEXT, 5)))],
    ["a lone CR after `stream`", pdfWith(stream("/Filter /FlateDecode", deflateSync(TEXT), "\r"))],
    ["junk and a CRLF after `stream`, a comment before it", Buffer.from(pdfWith(stream("/Filter /FlateDecode", deflateSync(TEXT), "  \r\n")).toString("latin1").replace(">>\nstream", ">> % note\nstream"), "latin1")],
    ["LZWDecode", pdfWith(stream("/Filter /LZWDecode", lzwEncode(TEXT)))],
    ["ASCIIHex around Flate", pdfWith(stream("/Filter [/ASCIIHexDecode /FlateDecode]", latin1(deflateSync(TEXT).toString("hex") + ">")))],
    ["ASCII85 around LZW", pdfWith(stream("/Filter [/A85 /LZW]", ascii85(lzwEncode(TEXT))))],
    ["RunLength around Flate", pdfWith(stream("/Filter [/RunLengthDecode /Fl]", runLength(deflateSync(TEXT))))],
    ["`4 0.obj` as the object header (pdfjs reads `0.` as the number 0)", Buffer.from(pdfWith(stream("/Filter /LZWDecode", lzwEncode(TEXT))).toString("latin1").replace("4 0 obj", "4 0.obj"), "latin1")],
    ["a hex-escaped filter name", pdfWith(stream("/Filter /Fl#61teDecode", deflateSync(TEXT)))],
    // a stored block holding "endstream" first: pdfjs trusts /Length (`endstream` is where it points), a scan for `endstream` stops early
    ["an `endstream` inside the data", pdfWith(stream("/Filter /FlateDecode", Buffer.concat([latin1("\x78\x9c"), Buffer.from([0, 13, 0, 0xf2, 0xff]), latin1("endstream end"), deflateRawSync(TEXT)])))],
    ["a /Length that lies", pdfWith(Buffer.concat([latin1("<< /Length 99999 /Filter /FlateDecode >>\nstream\n"), deflateSync(TEXT), latin1("\nendstream")]))],
    ["a stored block of length 0/0 first (zlib stops there, pdfjs goes on)", pdfWith(stream("/Filter /FlateDecode", Buffer.concat([latin1("\x78\x9c"), Buffer.from([0, 0, 0, 0, 0]), deflateRawSync(TEXT)])))],
    ["a zlib header with a 64 KiB window (zlib refuses it, pdfjs does not check)", pdfWith(stream("/Filter /FlateDecode", Buffer.concat([zlibHeader(0x88), deflateRawSync(TEXT)])))],
  ];
  for (const [name, bytes] of shapes) {
    it(`${name}: pdfjs reads the whole text, the guard counts it`, async () => {
      expect(bytes.length).toBeLessThan(TEXT.length);
      expect(await pdfjsReads(bytes)).toBe(N);
      await guardCounts(bytes, TEXT.length);
    }, 30_000);
  }

  it("counts a stream inside a Flate object stream", async () => {
    const inner = stream("/Filter /LZWDecode", lzwEncode(TEXT));
    const objStm = Buffer.concat([latin1("6 0 "), inner]);
    const bytes = pdfWith(stream("", latin1("")), [`<< /Length 0 /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\n${deflateSync(objStm).toString("latin1")}\nendstream`]);
    await guardCounts(bytes, objStm.length + TEXT.length);
    await expect(checkPdfInflation(new Uint8Array(bytes), 4 * TEXT.length)).resolves.toBeUndefined();
  });

  it("refuses an LZW bomb (256 MiB of zeros) at the default budget, and what it cannot decode as pdfjs would", async () => {
    const bomb = pdfWith(stream("/Filter /LZWDecode", lzwZeros(256)));
    expect(bomb.length).toBeLessThan(120_000);
    await expect(checkPdfInflation(new Uint8Array(bomb))).rejects.toMatchObject({ code: "SCRAPE_TOO_LARGE" });
    const indirect = pdfWith(stream("/Filter 6 0 R", deflateSync(TEXT)), ["[/FlateDecode]"]);
    await expect(checkPdfInflation(new Uint8Array(indirect))).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE" });
    const predictorBetween = pdfWith(stream("/Filter [/FlateDecode /FlateDecode] /DecodeParms [<< /Predictor 12 /Columns 4 >> null]", layers(TEXT, 2)));
    await expect(checkPdfInflation(new Uint8Array(predictorBetween))).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE" });
    const predictorThenImage = pdfWith(stream("/Filter [/FlateDecode /DCTDecode] /DecodeParms [<< /Predictor 12 /Columns 4 >> null]", deflateSync(TEXT)));
    await expect(checkPdfInflation(new Uint8Array(predictorThenImage))).resolves.toBeUndefined();
    const nested = pdfWith(latin1(`<< /Filter /LZWDecode /X << /Length 1 >> stream\nx\nendstream >>\nstream\nxx\nendstream`));
    await expect(checkPdfInflation(new Uint8Array(nested))).rejects.toMatchObject({ code: "SCRAPE_UNPARSEABLE" });
  }, 60_000);

  it("bounds its own reading: files made to be re-read, or read to the end by every stream, are refused", async () => {
    const refused = { code: "SCRAPE_UNPARSEABLE" };
    // every `obj` starts an unterminated string: each candidate object would read to the end of the file
    await expect(checkPdfInflation(new Uint8Array(Buffer.alloc(1 << 20, "obj<</a (")))).rejects.toMatchObject(refused);
    // a chain of `<<` in key position, and of nested values
    await expect(checkPdfInflation(new Uint8Array(Buffer.alloc(1 << 20, "obj<<")))).rejects.toMatchObject(refused);
    await expect(checkPdfInflation(new Uint8Array(Buffer.alloc(1 << 20, "obj<</a[")))).rejects.toMatchObject(refused);
    // many streams whose decoder reads on to the end of the file (ASCII85 stops only at `~`)
    await expect(checkPdfInflation(new Uint8Array(Buffer.alloc(1 << 20, "1 0 obj<</F/A85>>stream\n")))).rejects.toMatchObject({ code: expect.stringMatching(/SCRAPE_UNPARSEABLE|SCRAPE_TOO_LARGE/) });
    // while many short streams that end where they should cost about their length
    const many = Buffer.concat(Array.from({ length: 5000 }, (_, i) => latin1(`${i + 10} 0 obj\n<< /Length 20 /Filter /FlateDecode >>\nstream\n${deflateSync(latin1("BT (x) Tj ET")).toString("latin1")}\nendstream\nendobj\n`)));
    await expect(checkPdfInflation(new Uint8Array(pdfWith(stream("/Filter /FlateDecode", deflateSync(TEXT)), [many.toString("latin1")])))).resolves.toBeUndefined();
  }, 60_000);
});
