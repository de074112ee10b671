// Text decoding of a response: charset from the Content-Type header, a BOM, or a <meta> tag; UTF-8 otherwise.

function charsetOf(contentType: string): string | undefined {
  return /charset\s*=\s*["']?([\w:.-]+)/i.exec(contentType)?.[1];
}

function sniffMeta(head: string): string | undefined {
  return /<meta[^>]+charset\s*=\s*["']?\s*([\w:.-]+)/i.exec(head)?.[1];
}

export function decodeBody(bytes: Buffer, contentType: string): string {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder("utf-8").decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  const declared = charsetOf(contentType) ?? sniffMeta(bytes.subarray(0, 4096).toString("latin1"));
  if (declared) {
    try {
      return new TextDecoder(declared.toLowerCase()).decode(bytes);
    } catch {
      // unknown label: fall through to UTF-8
    }
  }
  return new TextDecoder("utf-8").decode(bytes);
}
