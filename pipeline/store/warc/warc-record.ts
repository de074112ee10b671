// One WARC 1.1 record (ISO 28500:2017) as bytes: the header block, the content block, two CRLFs. Pure.
// Digests are SHA-1 in base32 (RFC 4648), as Common Crawl and Heritrix write them: `sha1:<32 chars>`.
import { createHash, randomUUID } from "node:crypto";

const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32, no padding (a SHA-1's 160 bits are exactly 32 characters). */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** `sha1:<base32>` of the concatenated parts. */
export function sha1Digest(...parts: Uint8Array[]): string {
  const hash = createHash("sha1");
  for (const part of parts) hash.update(part);
  return `sha1:${base32(hash.digest())}`;
}

export const newRecordId = (): string => `<urn:uuid:${randomUUID()}>`;

/** WARC-Date: UTC, W3C-ISO8601, to the millisecond (WARC 1.1 allows fractions of a second). */
export const warcDate = (ms: number): string => new Date(ms).toISOString();

export type WarcType = "warcinfo" | "request" | "response" | "revisit" | "metadata" | "resource" | "conversion";

export interface WarcRecordInput {
  type: WarcType;
  id: string;
  date: number;
  /** named WARC fields after WARC-Type, WARC-Record-ID and WARC-Date (WARC-Target-URI, WARC-Concurrent-To, ...) */
  fields: [string, string][];
  contentType: string;
  /** the content block: for request / response / revisit, the HTTP head then the payload */
  head?: Uint8Array;
  payload: Uint8Array;
  /** whether WARC-Payload-Digest is written (records of an HTTP message); default: when there is a head */
  payloadDigest?: string | false;
}

export interface WarcRecordBytes {
  bytes: Buffer;
  blockDigest: string;
  payloadDigest?: string;
}

const CRLF = "\r\n";
/** Field values may not carry line breaks (a URL with a CR/LF would forge fields). */
const clean = (value: string): string => value.replace(/[\r\n]+/g, " ");

export function warcRecord(input: WarcRecordInput): WarcRecordBytes {
  const head = input.head ?? new Uint8Array(0);
  const blockDigest = sha1Digest(head, input.payload);
  const payloadDigest = input.payloadDigest === false ? undefined : (input.payloadDigest ?? (input.head ? sha1Digest(input.payload) : undefined));
  const lines = [
    "WARC/1.1",
    `WARC-Type: ${input.type}`,
    `WARC-Record-ID: ${input.id}`,
    `WARC-Date: ${warcDate(input.date)}`,
    ...input.fields.map(([name, value]) => `${name}: ${clean(value)}`),
    `WARC-Block-Digest: ${blockDigest}`,
    ...(payloadDigest ? [`WARC-Payload-Digest: ${payloadDigest}`] : []),
    `Content-Type: ${input.contentType}`,
    `Content-Length: ${head.length + input.payload.length}`,
  ];
  const header = Buffer.from(lines.join(CRLF) + CRLF + CRLF, "utf8");
  const bytes = Buffer.concat([header, head, input.payload, Buffer.from(CRLF + CRLF)]);
  return { bytes, blockDigest, ...(payloadDigest ? { payloadDigest } : {}) };
}
