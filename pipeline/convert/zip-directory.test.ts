// Zips crafted so that a check reading the end record and jszip (mammoth's zip reader) would see different entries.
// Each evasion is shown to be real (jszip lists the hidden entry) and refused by checkZip. Built here, never committed.
import JSZip from "jszip";
import { crc32, deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { makeDocx } from "../../test/fixtures/docx.ts";
import { checkZip, docxToHtml } from "./docx.ts";
import { readZipDirectory } from "./zip-directory.ts";

interface Entry {
  name: string;
  data: Buffer;
  stored?: boolean;
  /** Sizes and CRC only in a data descriptor after the data (flag bit 3), the local header holding zeros. */
  descriptor?: boolean;
  /** Overrides of the local header (offset in the header -> 16-bit value), to make it disagree with the central entry. */
  local16?: Record<number, number>;
  /** Declared inflated size in both headers, when it should lie. */
  declared?: number;
}

/** Local headers + data from offset `base` (padded to `pad` bytes), and the central directory pointing at them. */
function body(entries: Entry[], base = 0, pad = 0, centralAt?: (i: number, offset: number) => number): { locals: Buffer; dir: Buffer } {
  const locals: Buffer[] = [];
  const dir: Buffer[] = [];
  let offset = 0;
  entries.forEach((e, i) => {
    const data = e.stored ? e.data : deflateRawSync(e.data);
    const name = Buffer.from(e.name, "latin1");
    const size = e.declared ?? e.data.length;
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(e.descriptor ? 8 : 0, 6);
    h.writeUInt16LE(e.stored ? 0 : 8, 8);
    if (!e.descriptor) {
      h.writeUInt32LE(crc32(e.data), 14);
      h.writeUInt32LE(data.length, 18);
      h.writeUInt32LE(size, 22);
    }
    h.writeUInt16LE(name.length, 26);
    for (const [at, v] of Object.entries(e.local16 ?? {})) h.writeUInt16LE(v, Number(at));
    const descriptor = Buffer.alloc(e.descriptor ? 16 : 0);
    if (e.descriptor) {
      descriptor.writeUInt32LE(0x08074b50, 0);
      descriptor.writeUInt32LE(crc32(e.data), 4);
      descriptor.writeUInt32LE(data.length, 8);
      descriptor.writeUInt32LE(size, 12);
    }
    locals.push(h, name, data, descriptor);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(e.descriptor ? 8 : 0, 8);
    c.writeUInt16LE(e.stored ? 0 : 8, 10);
    c.writeUInt32LE(crc32(e.data), 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(centralAt ? centralAt(i, base + offset) : base + offset, 42);
    dir.push(c, name);
    offset += 30 + name.length + data.length + descriptor.length;
  });
  if (pad) locals.push(Buffer.alloc(pad - offset));
  return { locals: Buffer.concat(locals), dir: Buffer.concat(dir) };
}

function end(count: number, size: number, offset: number, comment: Buffer = Buffer.alloc(0)): Buffer {
  const e = Buffer.alloc(22);
  e.writeUInt32LE(0x06054b50, 0);
  e.writeUInt16LE(count, 8);
  e.writeUInt16LE(count, 10);
  e.writeUInt32LE(size, 12);
  e.writeUInt32LE(offset, 16);
  e.writeUInt16LE(comment.length, 20);
  return Buffer.concat([e, comment]);
}

function zip(entries: Entry[], opts: { count?: number; comment?: Buffer; centralAt?: (i: number, offset: number) => number } = {}): Buffer {
  const { locals, dir } = body(entries, 0, 0, opts.centralAt);
  return Buffer.concat([locals, dir, end(opts.count ?? entries.length, dir.length, locals.length, opts.comment)]);
}

const MB = 1024 * 1024;
const small: Entry = { name: "word/document.xml", data: Buffer.from("<w:document/>") };
const hidden: Entry = { name: "word/hidden.xml", data: Buffer.alloc(8 * MB, 0x20) };

/** What jszip (mammoth's reader) lists in the file, with the inflated sizes it declares. */
async function jszipSees(bytes: Buffer): Promise<string[]> {
  const z = await JSZip.loadAsync(bytes);
  return Object.keys(z.files).sort();
}

describe("checkZip reads the zip as jszip does (issue 50, finding 3)", () => {
  it("an end record that under-counts the entries does not hide them", async () => {
    const bomb = zip([small, hidden], { count: 1 });
    expect(bomb.length).toBeLessThan(20_000);
    expect(await jszipSees(bomb)).toEqual(["word/document.xml", "word/hidden.xml"]); // jszip reads past the count
    await expect(checkZip(bomb, MB)).rejects.toThrow(/end record counts 1 entries, the directory holds 2/);
  });

  it("data prepended before a second directory (jszip shifts every offset) does not hide it", async () => {
    // a benign zip whose directory sits at offset c, then the bomb's zip whose directory sits at P + c; the end record
    // gives offset c and the bomb directory's size, so jszip shifts by P and reads the bomb, the old check the benign one
    const bombPart = body([hidden]);
    const c = bombPart.locals.length;
    const benign = body([small], 0, c);
    const P = c + benign.dir.length + 64;
    const file = Buffer.concat([benign.locals, benign.dir, Buffer.alloc(64), body([hidden], 0, c).locals, bombPart.dir, end(1, bombPart.dir.length, c)]);
    expect(file.readUInt32LE(P + c)).toBe(0x02014b50);
    expect(await jszipSees(file)).toEqual(["word/hidden.xml"]);
    await expect(checkZip(file, MB)).rejects.toThrow(/directory does not end where its end record starts/);
  });

  it("a ZIP64 end record pointing at another directory does not hide it", async () => {
    // the 32-bit end record points at a benign directory; its size field 0xFFFFFFFF sends jszip to the ZIP64 records,
    // which point at the bomb's directory
    const benign = body([small]);
    const bombStart = benign.locals.length + benign.dir.length;
    const bomb = body([hidden], bombStart);
    const dirAt = bombStart + bomb.locals.length;
    const z64 = Buffer.alloc(56);
    z64.writeUInt32LE(0x06064b50, 0);
    z64.writeBigUInt64LE(44n, 4);
    z64.writeUInt16LE(45, 12);
    z64.writeUInt16LE(45, 14);
    z64.writeBigUInt64LE(1n, 24);
    z64.writeBigUInt64LE(1n, 32);
    z64.writeBigUInt64LE(BigInt(bomb.dir.length), 40);
    z64.writeBigUInt64LE(BigInt(dirAt), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(dirAt + bomb.dir.length), 8);
    locator.writeUInt32LE(1, 16);
    const file = Buffer.concat([benign.locals, benign.dir, bomb.locals, bomb.dir, z64, locator, end(1, 0xffffffff, benign.locals.length)]);
    expect(await jszipSees(file)).toEqual(["word/hidden.xml"]);
    await expect(checkZip(file, MB)).rejects.toThrow(/ZIP64/);
  });

  it("refuses what it cannot account for: a second end record in the comment, overlaps, mismatched local headers, duplicates, lying sizes", async () => {
    const good = zip([small]);
    await expect(checkZip(good, MB)).resolves.toBeUndefined();
    // a second end record inside the comment of the first (jszip takes the last one)
    const inner = end(1, 0, 0);
    await expect(checkZip(zip([small], { comment: Buffer.concat([inner, Buffer.from("xx")]) }), MB)).rejects.toThrow(/after the zip end record/);
    await expect(checkZip(Buffer.concat([good, Buffer.from("trailing")]), MB)).rejects.toThrow(/after the zip end record/);
    // entries sharing data (an overlapping "better zip bomb"): b.xml's local header inside a.xml's stored data
    const shared = body([{ ...small, name: "b.xml" }]).locals;
    const overlapping = zip([{ name: "a.xml", data: shared, stored: true }, { ...small, name: "b.xml" }], { centralAt: (i, o) => (i === 0 ? o : 30 + 5) });
    expect(await jszipSees(overlapping)).toEqual(["a.xml", "b.xml"]);
    await expect(checkZip(overlapping, MB)).rejects.toThrow(/zip entries that overlap/);
    await expect(checkZip(zip([small, { ...small, name: "x.xml" }], { centralAt: () => 0 }), MB)).rejects.toThrow(/local header gives another name/);
    await expect(checkZip(zip([small, small]), MB)).rejects.toThrow(/given twice/);
    await expect(checkZip(zip([{ ...small, local16: { 8: 0 } }]), MB)).rejects.toThrow(/another method/);
    await expect(checkZip(zip([{ ...small, local16: { 18: 1 } }]), MB)).rejects.toThrow(/other sizes/);
    await expect(checkZip(zip([{ ...small, local16: { 6: 1 } }]), MB)).resolves.toBeUndefined(); // local flags are not checked but bit 3
    // an entry that declares 100 bytes and inflates to 8 MiB is stopped at 100
    await expect(checkZip(zip([{ ...hidden, declared: 100 }]), 64 * MB)).rejects.toThrow(/another size than its directory declares/);
    await expect(checkZip(zip([{ ...small, stored: true, declared: 5 }]), MB)).rejects.toThrow(/stored zip entry whose sizes differ/);
  });

  it("accepts data descriptors, stored entries and comments, counting what they inflate to", async () => {
    const withDescriptor = zip([{ ...small, descriptor: true }, { name: "img.bin", data: Buffer.from("raw"), stored: true }], { comment: Buffer.from("made by a test") });
    expect(readZipDirectory(withDescriptor).map((e) => [e.name, e.method, e.uncompressedSize])).toEqual([["word/document.xml", 8, 13], ["img.bin", 0, 3]]);
    await expect(checkZip(withDescriptor, 16)).resolves.toBeUndefined();
    await expect(checkZip(withDescriptor, 15)).rejects.toThrow(/inflates to more than 15 bytes/);
    await expect(checkZip(zip([{ ...hidden, descriptor: true }]), MB)).rejects.toThrow(/inflates to more than/);
    // a real DOCX (deflated, as written by the fixtures) still converts
    expect((await docxToHtml(makeDocx([{ para: "Still readable." }]))).html).toContain("<p>Still readable.</p>");
  });
});
