// An undici Agent whose every connection resolves through one lookup: the private-address rule holds for the
// address actually connected to (no DNS-rebinding bypass), and RESOLVE overrides (host -> address) apply.
// Used by the page fetcher (ALLOW_PRIVATE_CRAWL_TARGETS) and by webhook delivery (ALLOW_LOCAL_WEBHOOKS).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import { Agent } from "undici";
import { isPrivateAddress } from "./private-address.ts";

export const PRIVATE_ADDRESS_REFUSED = "TRAWL_PRIVATE_ADDRESS";

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

export interface GuardOptions {
  allowPrivate: boolean;
  resolve?: Record<string, string>;
  connections?: number;
  rejectUnauthorized?: boolean;
}

export function guardedLookup(opts: GuardOptions) {
  return (hostname: string, options: { all?: boolean }, cb: LookupCallback) => {
    const override = opts.resolve?.[hostname.toLowerCase()];
    const answer = (found: LookupAddress[]) => {
      const allowed = opts.allowPrivate ? found : found.filter((a) => !isPrivateAddress(a.address));
      if (allowed.length === 0) {
        const err = new Error(`refused to connect to private address ${found[0]?.address ?? "?"} of ${hostname}`) as NodeJS.ErrnoException;
        err.code = PRIVATE_ADDRESS_REFUSED;
        return cb(err, options.all ? [] : "", 0);
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

/** True when `url`'s host is an IP literal that the rule refuses (literals skip the lookup). */
export function refusedLiteral(url: string, allowPrivate: boolean): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "");
  return !allowPrivate && isIP(host) !== 0 && isPrivateAddress(host) ? host : null;
}

export function guardedAgent(opts: GuardOptions): Agent {
  return new Agent({
    connect: { lookup: guardedLookup(opts) as never, rejectUnauthorized: opts.rejectUnauthorized ?? false },
    keepAliveTimeout: 10000,
    connections: opts.connections ?? 64,
  });
}
