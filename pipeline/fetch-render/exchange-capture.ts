// What the WARC archive needs of each request the fetcher sends (FetchRequest.capture): the status line and the
// header fields as received (case and order kept: an undici interceptor sees them before they become an object),
// the body as received (before it is inflated), the address connected to, and the request as sent.
import type { Dispatcher } from "undici";
import { requestHeadOf, type HttpExchange } from "../store/warc/http-exchange.ts";

export interface CapturedHead {
  statusText?: string;
  rawHeaders?: [string, string][];
}

type LegacyHandler = {
  onConnect?(abort: (err?: Error) => void, context?: object): void;
  onHeaders?(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: string[] | null): void;
  onError?(err: Error): void;
  onResponseStarted?(): void;
  onUpgrade?(statusCode: number, headers: Buffer[] | string[] | null, socket: unknown): void;
};

/** An interceptor that copies the raw status text and header fields into `into`, then hands everything on. */
export function captureHead(into: CapturedHead): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => {
    const inner = handler as LegacyHandler;
    const wrapped: LegacyHandler = {
      onConnect: (abort, context) => inner.onConnect?.(abort, context),
      onHeaders: (statusCode, rawHeaders, resume, statusText) => {
        into.statusText = statusText;
        const pairs: [string, string][] = [];
        for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
          const value = rawHeaders[i + 1] as Buffer | Buffer[];
          for (const v of Array.isArray(value) ? value : [value]) pairs.push([String(rawHeaders[i]), v.toString("latin1")]);
        }
        into.rawHeaders = pairs;
        return inner.onHeaders?.(statusCode, rawHeaders, resume, statusText) ?? true;
      },
      onData: (chunk) => inner.onData?.(chunk) ?? true,
      onComplete: (trailers) => inner.onComplete?.(trailers),
      onError: (err) => inner.onError?.(err),
      onResponseStarted: () => inner.onResponseStarted?.(),
      onUpgrade: (statusCode, headers, socket) => inner.onUpgrade?.(statusCode, headers, socket),
    };
    return dispatch(opts, wrapped as unknown as Dispatcher.DispatchHandler);
  };
}

/** Yields the chunks of `source` and keeps a copy of each in `into`. */
export async function* tee(source: AsyncIterable<Buffer>, into: Buffer[]): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    into.push(chunk);
    yield chunk;
  }
}

export function exchangeOf(args: {
  url: string; statusCode: number; head: CapturedHead; headers: Record<string, string | string[] | undefined>;
  requestFields: Record<string, string>; payload: Buffer; at: number; peerIp?: string;
}): HttpExchange {
  const fields = args.head.rawHeaders ?? Object.entries(args.headers).flatMap(([n, v]) => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x): [string, string] => [n, x])));
  return {
    url: args.url,
    requestHead: requestHeadOf(args.url, args.requestFields),
    statusLine: `HTTP/1.1 ${args.statusCode} ${args.head.statusText ?? ""}`.trimEnd(),
    statusCode: args.statusCode,
    headers: fields,
    payload: args.payload,
    at: args.at,
    ...(args.peerIp ? { peerIp: args.peerIp } : {}),
  };
}
