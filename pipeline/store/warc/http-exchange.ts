// One HTTP request and its answer as the fetcher saw them: what the WARC writer archives. Pure types and helpers.

export interface HttpExchange {
  /** the URL requested (WARC-Target-URI) */
  url: string;
  /** the request as sent: request line and headers, ending in an empty line */
  requestHead: string;
  /** `HTTP/1.1 200 OK` */
  statusLine: string;
  statusCode: number;
  /** response header fields in the order and case received */
  headers: [string, string][];
  /** the body as received: content-encoded when the server encoded it, not chunked (the transfer coding is undone) */
  payload: Buffer;
  /** the address connected to (absent through a proxy) */
  peerIp?: string;
  /** epoch ms when the request was sent */
  at: number;
}

/** The response head as archived: a transfer coding the client undid is renamed, as Common Crawl does. */
export function responseHead(exchange: HttpExchange): Buffer {
  const lines = [exchange.statusLine];
  for (const [name, value] of exchange.headers) {
    const lower = name.toLowerCase();
    lines.push(lower === "transfer-encoding" ? `X-Crawler-${name}: ${value}` : `${name}: ${value}`);
  }
  return Buffer.from(lines.join("\r\n") + "\r\n\r\n", "latin1");
}

/** The first value of a header, case-insensitively. */
export function headerValue(exchange: Pick<HttpExchange, "headers">, name: string): string | undefined {
  const lower = name.toLowerCase();
  return exchange.headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}

/** The undici request head: request line, Host, the connection header undici adds, then the fields given. */
export function requestHeadOf(url: string, fields: Record<string, string>): string {
  const u = new URL(url);
  const lines = [`GET ${u.pathname}${u.search} HTTP/1.1`, `host: ${u.host}`, "connection: keep-alive"];
  for (const [name, value] of Object.entries(fields)) lines.push(`${name}: ${value}`);
  return lines.join("\r\n") + "\r\n\r\n";
}
