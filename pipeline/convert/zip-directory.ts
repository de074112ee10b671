// The entries of a zip as jszip (mammoth's zip reader, node_modules/jszip/lib/zipEntries.js) will read them, read
// here first so that a size check counts exactly what jszip will inflate. jszip takes the LAST end-of-central-directory
// signature in the whole file, reads central-directory entries from the recorded offset for as long as their
// signature follows (whatever count the end record gives), shifts every offset when the recorded directory ends
// before the end record (prepended data), and takes each entry's data from its local header (the local name and
// extra-field lengths) with the CENTRAL compressed size and method. This reader follows the same rules and refuses
// (ZipDirectoryError) every zip on which a tampered field could make the two disagree: a count or size in the end
// record that the directory does not match, data before or after the archive, ZIP64, several disks, encryption, a
// local header that disagrees with its central entry, entries that overlap each other or the directory, duplicated
// names, offsets past the file, methods other than stored and deflated.

export class ZipDirectoryError extends Error {}

export interface ZipEntry {
  /** The name as the local header gives it (jszip's), latin1-decoded (only compared, never shown). */
  name: string;
  /** 0 stored, 8 deflated. */
  method: 0 | 8;
  /** Where the entry's data starts and its length (the central directory's compressed size). */
  dataStart: number;
  compressedSize: number;
  /** The size the central directory declares once inflated (jszip fails an entry that inflates to another size). */
  uncompressedSize: number;
}

const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const EOCD_SIGNATURE = Buffer.from([0x50, 0x4b, 0x05, 0x06]);

const refuse = (why: string): never => {
  throw new ZipDirectoryError(why);
};

/** A 32-bit size or offset: 0xFFFFFFFF means ZIP64, and jszip reads 2^31 and above as negative numbers. */
function u32(bytes: Buffer, at: number, what: string): number {
  const value = bytes.readUInt32LE(at);
  if (value === 0xffffffff) refuse(`${what} needs ZIP64, which a DOCX never needs`);
  if (value >= 0x80000000) refuse(`${what} out of range`);
  return value;
}

/** Every entry of the zip in `bytes`, in directory order, or ZipDirectoryError when any part cannot be accounted for. */
export function readZipDirectory(bytes: Buffer): ZipEntry[] {
  if (bytes.length < 22) refuse("no zip directory");
  // jszip: lastIndexOfSignature over the whole file, from length - 4 down
  const eocd = bytes.lastIndexOf(EOCD_SIGNATURE);
  if (eocd < 0) refuse("no zip directory");
  if (eocd + 22 > bytes.length) refuse("a zip end record cut short");
  const commentLength = bytes.readUInt16LE(eocd + 20);
  if (eocd + 22 + commentLength !== bytes.length) refuse("bytes after the zip end record and its comment");
  const disk = bytes.readUInt16LE(eocd + 4);
  const directoryDisk = bytes.readUInt16LE(eocd + 6);
  const onThisDisk = bytes.readUInt16LE(eocd + 8);
  const count = bytes.readUInt16LE(eocd + 10);
  if ([disk, directoryDisk, onThisDisk, count].includes(0xffff)) refuse("the zip end record asks for ZIP64, which a DOCX never needs");
  const directorySize = u32(bytes, eocd + 12, "the zip directory size");
  const directoryOffset = u32(bytes, eocd + 16, "the zip directory offset");
  if (disk !== 0 || directoryDisk !== 0 || onThisDisk !== count) refuse("a zip split over several disks");
  // jszip shifts every offset by the difference (prepended data) or fails when negative: only 0 reads the same both ways
  if (directoryOffset + directorySize !== eocd) refuse("the zip directory does not end where its end record starts");

  // jszip reads entries while the central signature follows, whatever the end record counts
  const entries: ZipEntry[] = [];
  const names = new Set<string>();
  const spans: Array<[number, number]> = [];
  let at = directoryOffset;
  while (at + 4 <= bytes.length && bytes.readUInt32LE(at) === CENTRAL) {
    if (at + 46 > bytes.length) refuse("a zip directory entry cut short");
    const flags = bytes.readUInt16LE(at + 8);
    const method = bytes.readUInt16LE(at + 10);
    const compressedSize = u32(bytes, at + 20, "an entry's compressed size");
    const uncompressedSize = u32(bytes, at + 24, "an entry's size");
    const nameLength = bytes.readUInt16LE(at + 28);
    const entryEnd = at + 46 + nameLength + bytes.readUInt16LE(at + 30) + bytes.readUInt16LE(at + 32);
    if (bytes.readUInt16LE(at + 34) === 0xffff) refuse("an entry asks for ZIP64, which a DOCX never needs");
    const local = u32(bytes, at + 42, "an entry's offset");
    if (entryEnd > eocd) refuse("a zip directory entry runs past the directory");
    if (flags & 0x0001) refuse("an encrypted zip entry");
    if (method !== 0 && method !== 8) refuse(`zip compression method ${method}`);
    const name = bytes.toString("latin1", at + 46, at + 46 + nameLength);

    if (local + 30 > directoryOffset || bytes.readUInt32LE(local) !== LOCAL) refuse("a zip entry without its local header");
    const localNameLength = bytes.readUInt16LE(local + 26);
    const dataStart = local + 30 + localNameLength + bytes.readUInt16LE(local + 28);
    const dataEnd = dataStart + compressedSize;
    if (dataEnd > directoryOffset) refuse("a zip entry's data runs into the directory");
    if (bytes.readUInt16LE(local + 8) !== method) refuse("a zip entry whose local header gives another method");
    if (bytes.toString("latin1", local + 30, local + 30 + localNameLength) !== name) refuse("a zip entry whose local header gives another name");
    // without a data descriptor (bit 3), the local header repeats the sizes: one that disagrees was tampered with
    const localFlags = bytes.readUInt16LE(local + 6);
    if (!(localFlags & 0x0008) && (bytes.readUInt32LE(local + 18) !== compressedSize || bytes.readUInt32LE(local + 22) !== uncompressedSize)) {
      refuse("a zip entry whose local header gives other sizes");
    }
    if (method === 0 && compressedSize !== uncompressedSize) refuse("a stored zip entry whose sizes differ");
    if (names.has(name)) refuse(`a zip entry name given twice (${JSON.stringify(name.slice(0, 100))})`);
    names.add(name);
    spans.push([local, dataEnd]);
    entries.push({ name, method: method as 0 | 8, dataStart, compressedSize, uncompressedSize });
    at = entryEnd;
  }
  if (at !== eocd) refuse("the zip directory holds something other than entries");
  if (entries.length !== count) refuse(`the zip end record counts ${count} entries, the directory holds ${entries.length}`);
  spans.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) if (spans[i]![0] < spans[i - 1]![1]) refuse("zip entries that overlap");
  return entries;
}
