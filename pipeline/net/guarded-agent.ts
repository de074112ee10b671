// An undici Agent whose every connection resolves through one lookup: the private-address rule holds for the
// address actually connected to (no DNS-rebinding bypass), and RESOLVE overrides (host -> address) apply.
// IP literals never reach a lookup, so the agent's connector checks them itself before connecting.
// Used by the page fetcher (ALLOW_PRIVATE_CRAWL_TARGETS) and by webhook delivery (ALLOW_LOCAL_WEBHOOKS).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { connect, isIP, type Socket } from "node:net";
import { Agent, buildConnector } from "undici";
import { isIpLiteral, isPrivateAddress } from "./private-address.ts";

export const PRIVATE_ADDRESS_REFUSED = "TRAWL_PRIVATE_ADDRESS";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface GuardOptions {
  allowPrivate: boolean;
  resolve?: Record<string, string>;
  connections?: number;
  rejectUnauthorized?: boolean;
  /** told the address of each new connection (`host:port` as asked, address connected to): WARC-IP-Address */
  onConnected?: (hostPort: string, address: string) => void;
}

function refusal(message: string): NodeJS.ErrnoException {
  const err = new Error(message) as NodeJS.ErrnoException;
  err.code = PRIVATE_ADDRESS_REFUSED;
  return err;
}

export function guardedLookup(opts: GuardOptions) {
  return (hostname: string, options: { all?: boolean }, cb: LookupCallback) => {
    const override = opts.resolve?.[hostname.toLowerCase()];
    const answer = (found: LookupAddress[]) => {
      const allowed = opts.allowPrivate ? found : found.filter((a) => !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        return cb(refusal(`refused to connect to private address ${found[0]?.address ?? "?"} of ${hostname}`), options.all ? [] : "", 0);
      }
      if (options.all) return cb(null, allowed);
      const first = allowed[0] as LookupAddress;
      return cb(null, first.address, first.family);
    };
    if (override) return answer([{ address: override, family: isIP(override) || 4 }]);
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return cb(err, options.all ? [] : "", 0);
      answer(addresses);
    });
  };
}

/** The IP literal host of `url` when the rule refuses it (for a clear error before any request), else null. */
export function refusedLiteral(url: string, allowPrivate: boolean): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return !allowPrivate && isIpLiteral(host) && isPrivateAddress(host) ? host : null;
}

export function guardedAgent(opts: GuardOptions): Agent {
  const connector = buildConnector({ lookup: guardedLookup(opts) as never, rejectUnauthorized: opts.rejectUnauthorized ?? false });
  const connect: buildConnector.connector = (options, callback) => {
    // node's net.connect skips the lookup for an IP literal: the rule is applied to it here
    if (!opts.allowPrivate && isPrivateAddress(options.hostname)) {
      callback(refusal(`refused to connect to private address ${options.hostname}`), null);
      return;
    }
    const { onConnected } = opts;
    if (!onConnected) return connector(options, callback);
    connector(options, (err, socket) => {
      const address = socket?.remoteAddress;
      if (!err && address) onConnected(`${options.hostname}:${options.port || (options.protocol === "https:" ? "443" : "80")}`, address);
      (callback as (e: Error | null, s: typeof socket) => void)(err, socket);
    });
  };
  return new Agent({
    connect,
    keepAliveTimeout: 10000,
    connections: opts.connections ?? 64,
  });
}

/**
 * A raw TCP connection to `host:port` under the same rule as guardedAgent (the address checked is the address
 * connected to; RESOLVE applies): the browser's CONNECT tunnels (https and WebSockets it opens itself).
 */
export function guardedSocket(host: string, port: number, opts: GuardOptions): Promise<Socket> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (!opts.allowPrivate && isPrivateAddress(bare)) return Promise.reject(refusal(`refused to connect to private address ${bare}`));
  return new Promise((resolve, reject) => {
    const sock = connect({ host: bare, port, lookup: guardedLookup(opts) as never, autoSelectFamily: false });
    sock.once("connect", () => {
      sock.removeListener("error", reject);
      resolve(sock);
    });
    sock.once("error", reject);
  });
}
