// The WARC records of one fetched URL, in the order WARC 1.1 gives: request, response (or revisit), metadata; the
// CDXJ entry of the response. Pure: ids and dates come in, bytes come out (uncompressed).
import { headerValue, responseHead, type HttpExchange } from "./http-exchange.ts";
import { newRecordId, sha1Digest, warcRecord, type WarcRecordBytes } from "./warc-record.ts";

export interface ExchangeContext {
  crawlId: string;
  depth?: number;
  /** the page that linked to this URL */
  referrer?: string;
  /** why the URL was fetched: page, redirect hop, robots, sitemap */
  role: "page" | "redirect" | "robots" | "sitemap";
}

/** A record found earlier in the same archive with the same payload (identical-payload-digest). */
export interface EarlierCapture {
  uri: string;
  date: string;
}

/** What the CDXJ index says of a response or revisit record; offset, length and filename are added by the writer. */
export interface CdxFields {
  url: string;
  timestamp: number;
  mime: string;
  status: number;
  digest: string;
}

export interface PlannedRecord {
  record: WarcRecordBytes;
  cdx?: CdxFields;
}

const SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
const IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

const mimeOf = (exchange: HttpExchange): string => (headerValue(exchange, "content-type") ?? "unk").split(";")[0]!.trim().toLowerCase() || "unk";
const bare = (digest: string): string => digest.replace(/^sha1:/, "");

/**
 * request, response / revisit, metadata. `earlier(digest)` answers a capture of the same payload already archived
 * (then a revisit with profile identical-payload-digest); a 304 is a revisit with profile server-not-modified.
 */
/**
 * A browser-rendered page: its DOM after scripts as a `conversion` record of the URL (the main document's response,
 * as served, is the fetch's response record), and a metadata record.
 */
export function conversionRecords(url: string, at: number, html: string, context: ExchangeContext, ids: () => string = newRecordId): PlannedRecord[] {
  const id = ids();
  const conversion = warcRecord({ type: "conversion", id, date: at, fields: [["WARC-Target-URI", url]], contentType: "text/html; charset=utf-8", payload: Buffer.from(html, "utf8") });
  const lines = [`crawlId: ${context.crawlId}`, "role: rendered", ...(context.depth !== undefined ? [`depth: ${context.depth}`] : []), `renderTimeMs: ${at}`];
  const metadata = warcRecord({
    type: "metadata", id: ids(), date: at, fields: [["WARC-Target-URI", url], ["WARC-Concurrent-To", id]],
    contentType: "application/warc-fields", payload: Buffer.from(lines.join("\r\n") + "\r\n", "utf8"),
  });
  return [{ record: conversion }, { record: metadata }];
}

export function exchangeRecords(
  exchange: HttpExchange,
  context: ExchangeContext,
  earlier: (payloadDigest: string) => EarlierCapture | undefined = () => undefined,
  ids: () => string = newRecordId,
): PlannedRecord[] {
  const responseId = ids();
  const requestId = ids();
  const target: [string, string] = ["WARC-Target-URI", exchange.url];
  const ip: [string, string][] = exchange.peerIp ? [["WARC-IP-Address", exchange.peerIp]] : [];
  const head = responseHead(exchange);
  const mime = mimeOf(exchange);
  let response: PlannedRecord;
  const full = warcRecord({
    type: "response", id: responseId, date: exchange.at, fields: [target, ...ip],
    contentType: "application/http; msgtype=response", head, payload: exchange.payload,
  });
  const payloadDigest = full.payloadDigest!;
  const previous = exchange.statusCode === 304 || exchange.payload.length === 0 ? undefined : earlier(payloadDigest);
  if (exchange.statusCode === 304) {
    const record = warcRecord({
      type: "revisit", id: responseId, date: exchange.at,
      fields: [target, ...ip, ["WARC-Profile", SERVER_NOT_MODIFIED]],
      contentType: "application/http; msgtype=response", head, payload: exchange.payload, payloadDigest: false,
    });
    response = { record, cdx: { url: exchange.url, timestamp: exchange.at, mime: "warc/revisit", status: 304, digest: bare(sha1Digest(exchange.payload)) } };
  } else if (previous) {
    const record = warcRecord({
      type: "revisit", id: responseId, date: exchange.at,
      fields: [target, ...ip, ["WARC-Profile", IDENTICAL_PAYLOAD], ["WARC-Refers-To-Target-URI", previous.uri], ["WARC-Refers-To-Date", previous.date], ["WARC-Truncated", "length"]],
      contentType: "application/http; msgtype=response", head, payload: new Uint8Array(0), payloadDigest,
    });
    response = { record, cdx: { url: exchange.url, timestamp: exchange.at, mime: "warc/revisit", status: exchange.statusCode, digest: bare(payloadDigest) } };
  } else {
    response = { record: full, cdx: { url: exchange.url, timestamp: exchange.at, mime, status: exchange.statusCode, digest: bare(payloadDigest) } };
  }
  const request = warcRecord({
    type: "request", id: requestId, date: exchange.at, fields: [target, ...ip, ["WARC-Concurrent-To", responseId]],
    contentType: "application/http; msgtype=request", head: Buffer.from(exchange.requestHead, "latin1"), payload: new Uint8Array(0),
  });
  const lines = [
    `crawlId: ${context.crawlId}`,
    `role: ${context.role}`,
    ...(context.depth !== undefined ? [`depth: ${context.depth}`] : []),
    ...(context.referrer ? [`via: ${context.referrer}`] : []),
    `fetchTimeMs: ${exchange.at}`,
  ];
  const metadata = warcRecord({
    type: "metadata", id: ids(), date: exchange.at, fields: [target, ["WARC-Concurrent-To", responseId]],
    contentType: "application/warc-fields", payload: Buffer.from(lines.join("\r\n") + "\r\n", "utf8"),
  });
  return [{ record: request }, response, { record: metadata }];
}
