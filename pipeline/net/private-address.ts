// Which IP addresses are not on the public internet: loopback, private, link-local, unique-local, unspecified,
// multicast, broadcast, carrier-grade NAT, reserved and documentation ranges (IPv4 and IPv6).
// Every spelling is parsed (ipaddr.js), never matched as text: `::ffff:127.0.0.1` and `::ffff:7f00:1` are the same
// address. IPv6 forms that carry an IPv4 address are judged by that address: IPv4-mapped `::ffff:a.b.c.d`,
// IPv4-translated `::ffff:0:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::/96` and 6to4 `2002::/16`.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/** IPv4 ranges that are public (everything else ipaddr.js names is not). */
const PUBLIC_V4 = new Set(["unicast", "as112", "amt"]);

function v4Private(addr: ipaddr.IPv4): boolean {
  return !PUBLIC_V4.has(addr.range());
}

const v4At = (parts: number[], i: number) =>
  new ipaddr.IPv4([(parts[i] ?? 0) >> 8, (parts[i] ?? 0) & 0xff, (parts[i + 1] ?? 0) >> 8, (parts[i + 1] ?? 0) & 0xff]);

/** The IPv4 address an IPv6 address carries, when it is one of the forms that do. */
export function embeddedIPv4(addr: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = addr.parts;
  const range = addr.range();
  if (range === "ipv4Mapped" || range === "rfc6145") return v4At(p, 6);
  if (range === "6to4") return v4At(p, 1);
  // NAT64 well-known prefix 64:ff9b::/96 (the local-use 64:ff9b:1::/48 is refused as a whole below)
  if (p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x) => x === 0)) return v4At(p, 6);
  // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks); :: and ::1 included (0.0.0.0/8)
  if (p.slice(0, 6).every((x) => x === 0)) return v4At(p, 6);
  return null;
}

/** The host part of a URL or an address as a resolver returns it: brackets and an IPv6 zone are accepted. */
export function parseIp(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = address.trim().replace(/^\[|\]$/g, "");
  // strict forms only (ipaddr.js alone would also take inet_aton's 127.1): URL hosts arrive normalised, and a
  // non-strict string is a host name, which the resolver (and so the guarded lookup) turns into an address
  if (isIP(text) === 0) return null;
  return ipaddr.parse(text);
}

/**
 * True when `address` is an IP address that is not publicly routable. Host names (not IP literals) are false:
 * resolve them first (the guarded agent does, at connect time).
 */
export function isPrivateAddress(address: string): boolean {
  const addr = parseIp(address);
  if (!addr) return false;
  if (addr.kind() === "ipv4") return v4Private(addr as ipaddr.IPv4);
  const v6 = addr as ipaddr.IPv6;
  const v4 = embeddedIPv4(v6);
  if (v4) return v4Private(v4);
  // only global unicast is public; teredo, documentation, discard, ORCHID, NAT64 local-use, ... are refused
  const range = v6.range();
  return range !== "unicast" || (v6.parts[0] === 0x64 && v6.parts[1] === 0xff9b);
}

/** True when the host is an IP literal (with or without brackets), whatever its range. */
export function isIpLiteral(host: string): boolean {
  return parseIp(host) !== null;
}
